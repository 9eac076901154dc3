package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	"github.com/deployer-dev/deployer/internal/lockmgr/postgres"
	"github.com/deployer-dev/deployer/internal/pgschema"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
)

func opener(tb testing.TB, url string) *postgres.Backend {
	tb.Helper()
	b, err := postgres.Open(context.Background(), url)
	if err != nil {
		tb.Fatalf("open postgres lock backend: %v", err)
	}
	return b
}

func TestConformance(t *testing.T) {
	url := pgschematest.Migrated(t) // one schema, many independent pools
	locktest.Run(t, func(t *testing.T) lockmgr.Backend { return opener(t, url) })
}

// Before `deployer backend init` every operation says what to run.
func TestMissingSchemaSaysRunBackendInit(t *testing.T) {
	b := opener(t, pgschematest.Empty(t))
	defer b.Close()
	now := time.Now()
	_, err := b.TryAcquire(context.Background(), lockmgr.Record{LockKey: "custom:x", LockID: uuid.NewString(),
		LockedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix()})
	if !errors.Is(err, pgschema.ErrSchema) {
		t.Fatalf("TryAcquire without schema = %v, want pgschema.ErrSchema", err)
	}
	want := "acquire lock custom:x: postgres schema is at version 0, deployer needs 1: run deployer backend init"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
}

// BenchmarkAcquireRelease: deployer's backend (and Manager) next to the raw
// floor on the same server: INSERT ... ON CONFLICT DO NOTHING + DELETE
// (performance target: within 1.3x of the floor).
func BenchmarkAcquireRelease(b *testing.B) {
	url := pgschematest.Migrated(b)
	locktest.Bench(b, func(b *testing.B) lockmgr.Backend { return opener(b, url) })

	b.Run("RawInsertOnConflictDelete", func(b *testing.B) {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		key := "custom:raw-floor"
		for b.Loop() {
			id := uuid.NewString()
			tag, err := pool.Exec(ctx, `INSERT INTO deployer_locks
				(lock_key, lock_id, locked_by, locked_at, expires_at, last_heartbeat, metadata, fence)
				VALUES ($1, $2, 'bench@host', 0, 3600, 0, '{}', 0) ON CONFLICT (lock_key) DO NOTHING`, key, id)
			if err != nil || tag.RowsAffected() != 1 {
				b.Fatalf("insert = %v, %v", tag, err)
			}
			tag, err = pool.Exec(ctx, `DELETE FROM deployer_locks WHERE lock_key = $1 AND lock_id = $2`, key, id)
			if err != nil || tag.RowsAffected() != 1 {
				b.Fatalf("delete = %v, %v", tag, err)
			}
		}
	})
}

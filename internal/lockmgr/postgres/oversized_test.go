package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
)

// A row whose metadata is 8 MiB of JSON, inserted directly (docs/locking.md,
// "Record size"): it is measured in the query and never sent. Its
// expires_at is far off: a row the server sees expired is taken over by the
// conditional INSERT, which replaces it whole, as any expired row.
func TestOversizedRecordIsHeldAndNamed(t *testing.T) {
	url := pgschematest.Migrated(t)
	b := opener(t, url)
	defer b.Close()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	locktest.RunOversized(t, b, func(t *testing.T, key string, data []byte) {
		_, err := pool.Exec(context.Background(), `INSERT INTO deployer_locks
			(lock_key, lock_id, locked_by, locked_at, expires_at, last_heartbeat, metadata, fence)
			VALUES ($1, 'x', 'mallory', 1, $3, 1, $2::jsonb, 1)`, key, string(data), int64(1)<<62)
		if err != nil {
			t.Fatal(err)
		}
	})
}

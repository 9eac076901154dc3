package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
)

// A statement whose reply is lost (PostgreSQL committed it, the connection
// broke before the answer arrived) is recognised as ours by reading back:
// acquire, heartbeat and release each succeed once and leave no ghost row
// (docs/locking.md, "Lost replies").
func TestLostRepliesAreOurs(t *testing.T) {
	url, proxy := faulttest.ViaTCP(t, pgschematest.Migrated(t))
	b := opener(t, url)
	defer b.Close()
	ctx := context.Background()
	key := lockmgr.CustomKey("lost-" + uuid.NewString()[:8])
	now := time.Now()
	rec := lockmgr.Record{LockKey: key, LockID: uuid.NewString(), LockedBy: "alice@laptop", LockedAt: now.Unix(),
		ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix(), Metadata: lockmgr.Metadata{Operation: "exec"}}
	if _, err := b.List(ctx, "custom:"); err != nil { // connect and check the schema first
		t.Fatal(err)
	}

	proxy.DropNext(rec.LockID)
	got, err := b.TryAcquire(ctx, rec)
	if err != nil || got.LockID != rec.LockID || got.Fence < 1 {
		t.Fatalf("TryAcquire with its reply lost = %+v, %v; want our own record", got, err)
	}
	at := now.Add(30 * time.Second)
	proxy.DropNext(rec.LockID)
	if err := b.Heartbeat(ctx, key, rec.LockID, at, at.Add(time.Hour)); err != nil {
		t.Fatalf("Heartbeat with its reply lost: %v", err)
	}
	proxy.DropNext(rec.LockID)
	if err := b.Release(ctx, key, rec.LockID); err != nil {
		t.Fatalf("Release with its reply lost: %v (want our own release recognised)", err)
	}
	if cur, err := b.Get(ctx, key); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("after the release: %+v, %v; want ErrNotFound", cur, err)
	}
	if n := proxy.Armed(); n != 0 {
		t.Fatalf("%d faults never fired (%d dropped)", n, proxy.Dropped())
	}
}

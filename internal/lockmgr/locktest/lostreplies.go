package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// LostReplies takes, heartbeats and releases one custom lock on b (which
// connects through proxy), with the reply to each request dropped after the
// server carried it out (proxy drops the reply to the next request that
// carries the lock id). The backend must recognise each write as its own:
// every call succeeds once and no ghost record is left (docs/locking.md,
// "Lost replies"). It returns the released record. Before it writes, it
// runs ready (nil: none), e.g. to connect and check a schema.
func LostReplies(t *testing.T, b lockmgr.Backend, proxy *faulttest.TCPDropper, ready func(context.Context) error) lockmgr.Record {
	t.Helper()
	ctx := context.Background()
	key := lockmgr.CustomKey("lost-" + uuid.NewString()[:8])
	now := time.Now()
	rec := lockmgr.Record{LockKey: key, LockID: uuid.NewString(), LockedBy: "alice@laptop", LockedAt: now.Unix(),
		ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix(), Metadata: lockmgr.Metadata{Operation: "exec"}}
	if ready != nil {
		if err := ready(ctx); err != nil {
			t.Fatal(err)
		}
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
	return rec
}

package none_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/none"
)

// With locking off, a second deploy of the same stack is not stopped: both
// leases are granted at once, with growing fences, and release cleanly.
func TestEveryAcquireSucceeds(t *testing.T) {
	ctx := context.Background()
	m := lockmgr.NewManager(none.New(), lockmgr.Options{})
	req := lockmgr.Request{Key: lockmgr.StackKey("shop", "prod"), LockedBy: "alice@laptop"}
	first, err := m.Acquire(ctx, req)
	if err != nil {
		t.Fatalf("first Acquire: %v", err)
	}
	second, err := m.Acquire(ctx, req)
	if err != nil {
		t.Fatalf("second Acquire of the same key: %v, want success with locking off", err)
	}
	if second.Record().Fence <= first.Record().Fence {
		t.Errorf("fences %d then %d, want growing", first.Record().Fence, second.Record().Fence)
	}
	for _, l := range []*lockmgr.Lease{first, second} {
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release: %v", err)
		}
	}
}

// `state locks` has nothing to show, and nothing is ever found.
func TestNothingIsStored(t *testing.T) {
	ctx := context.Background()
	b := none.New()
	now := time.Now()
	rec := lockmgr.Record{LockKey: lockmgr.CustomKey("nightly-sync"), LockID: "id", LockedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix()}
	got, err := b.TryAcquire(ctx, rec)
	if err != nil || got.Fence != 1 || got.LockID != "id" {
		t.Fatalf("TryAcquire = %+v, %v; want the record with fence 1", got, err)
	}
	if recs, err := b.List(ctx, ""); err != nil || len(recs) != 0 {
		t.Errorf("List = %v, %v; want nothing", recs, err)
	}
	if _, err := b.Get(ctx, rec.LockKey); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("Get = %v, want ErrNotFound", err)
	}
	if err := b.Heartbeat(ctx, rec.LockKey, "someone-else", now, now.Add(time.Hour)); err != nil {
		t.Errorf("Heartbeat = %v, want nil", err)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := none.New()
	if _, err := b.TryAcquire(ctx, lockmgr.Record{LockKey: "custom:x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("TryAcquire with a cancelled context = %v, want context.Canceled", err)
	}
	if err := b.Release(ctx, "custom:x", "id"); !errors.Is(err, context.Canceled) {
		t.Errorf("Release with a cancelled context = %v, want context.Canceled", err)
	}
}

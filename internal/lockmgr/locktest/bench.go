package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Bench measures one lock cycle on a single key against newBackend's store
// (docs/backends.md#performance-make-bench): "Backend" is TryAcquire + Release, "Manager" is Manager.Acquire
// (which adds the hierarchy List) + Lease.Release. Compare them with the
// store's raw conditional write + delete in the same run.
func Bench(b *testing.B, newBackend func(b *testing.B) lockmgr.Backend) {
	b.Run("Backend", func(b *testing.B) {
		be := open(b, newBackend)
		key := lockmgr.StackKey(uniqueName(b), "bench")
		ctx := context.Background()
		now := time.Now()
		rec := lockmgr.Record{LockKey: key, LockedBy: "bench@host", LockedAt: now.Unix(),
			ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix(), Metadata: lockmgr.Metadata{Operation: "deploy"}}
		for b.Loop() {
			rec.LockID = uuid.NewString()
			if _, err := be.TryAcquire(ctx, rec); err != nil {
				b.Fatalf("TryAcquire: %v", err)
			}
			if err := be.Release(ctx, key, rec.LockID); err != nil {
				b.Fatalf("Release: %v", err)
			}
		}
	})
	b.Run("Manager", func(b *testing.B) {
		m := lockmgr.NewManager(open(b, newBackend), lockmgr.Options{})
		req := lockmgr.Request{Key: lockmgr.StackKey(uniqueName(b), "bench"), LockedBy: "bench@host"}
		ctx := context.Background()
		for b.Loop() {
			l, err := m.Acquire(ctx, req)
			if err != nil {
				b.Fatalf("Acquire: %v", err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatalf("Release: %v", err)
			}
		}
	})
}

func open(b *testing.B, newBackend func(b *testing.B) lockmgr.Backend) lockmgr.Backend {
	be := newBackend(b)
	b.Cleanup(func() { _ = be.Close() })
	return be
}

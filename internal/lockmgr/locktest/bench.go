package locktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Bench measures one lock cycle on a single key against newBackend's store
// (docs/backends.md#performance-make-bench): "Backend" is TryAcquire + Release, "Manager" is Manager.Acquire
// (which adds the hierarchy List) + Lease.Release. Compare them with the
// store's raw conditional write + delete in the same run. "Handoff" is
// BenchHandoff.
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
	b.Run("Handoff", func(b *testing.B) { BenchHandoff(b, newBackend) })
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

// BenchHandoff measures the handoff: the time from a holder's release to
// the acquisition by a process already waiting for it (Acquire with a
// timeout), reported as ms/handoff. The waiter has waited holdFor (plus 0
// to 45 ms, in turn) when the holder releases, as a queued deploy has
// (docs/locking.md#wait-queue).
func BenchHandoff(b *testing.B, newBackend func(b *testing.B) lockmgr.Backend) {
	const holdFor = 500 * time.Millisecond
	holder := lockmgr.NewManager(open(b, newBackend), lockmgr.Options{})
	key := lockmgr.CustomKey("handoff-" + uniqueName(b))
	ctx := context.Background()
	var total time.Duration
	n := 0
	for b.Loop() {
		l, err := holder.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: "holder@bench"})
		if err != nil {
			b.Fatalf("Acquire: %v", err)
		}
		waiting := make(chan struct{})
		var once sync.Once
		waiter := lockmgr.NewManager(open(b, newBackend), lockmgr.Options{OnWait: func(ev lockmgr.WaitEvent) {
			if !ev.Done {
				once.Do(func() { close(waiting) })
			}
		}})
		got := make(chan time.Time, 1)
		go func() {
			wl, err := waiter.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: "waiter@bench", Timeout: time.Minute})
			at := time.Now()
			if err != nil {
				b.Errorf("waiting Acquire: %v", err)
			} else {
				_ = wl.Release(ctx)
			}
			got <- at
		}()
		<-waiting
		// The section's length, not a wait for a condition; spread over a
		// poll interval so that the release does not fall at the same
		// point of a polling waiter's cycle every time.
		time.Sleep(holdFor + time.Duration(n%10)*5*time.Millisecond)
		released := time.Now()
		if err := l.Release(ctx); err != nil {
			b.Fatalf("Release: %v", err)
		}
		total += (<-got).Sub(released)
		n++
	}
	b.ReportMetric(float64(total)/float64(time.Millisecond)/float64(n), "ms/handoff")
}

func open(b *testing.B, newBackend func(b *testing.B) lockmgr.Backend) lockmgr.Backend {
	be := newBackend(b)
	b.Cleanup(func() { _ = be.Close() })
	return be
}

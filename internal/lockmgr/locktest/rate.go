package locktest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// BenchWaitingRate measures the requests a waiting process sends
// (docs/locking.md#wait-queue): a holder keeps the key for 5 s while two
// processes wait, the head of the queue and the one behind it. newBackend
// returns a client and a counter of the requests it sent. It reports
// head-req/min and follower-req/min.
func BenchWaitingRate(b *testing.B, newBackend func(b *testing.B) (lockmgr.Backend, *atomic.Int64)) {
	const hold = 5 * time.Second
	ctx := context.Background()
	hb, _ := newBackend(b)
	b.Cleanup(func() { _ = hb.Close() })
	holder := lockmgr.NewManager(hb, lockmgr.Options{})
	key := lockmgr.CustomKey("rate-" + uniqueName(b))
	var head, follower float64
	n := 0
	for b.Loop() {
		l, err := holder.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: "holder@bench"})
		if err != nil {
			b.Fatalf("Acquire: %v", err)
		}
		var counts [2]*atomic.Int64
		var wg sync.WaitGroup
		for i := range 2 {
			be, c := newBackend(b)
			b.Cleanup(func() { _ = be.Close() })
			counts[i] = c
			queued := make(chan struct{})
			var once sync.Once
			m := lockmgr.NewManager(be, lockmgr.Options{OnWait: func(ev lockmgr.WaitEvent) {
				if ev.Position > 0 {
					once.Do(func() { close(queued) })
				}
			}})
			wg.Go(func() {
				wl, err := m.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: "waiter@bench", Timeout: time.Minute})
				if err != nil {
					b.Errorf("waiting Acquire: %v", err)
					return
				}
				_ = wl.Release(ctx)
			})
			<-queued
		}
		before := [2]int64{counts[0].Load(), counts[1].Load()}
		time.Sleep(hold) // the holder's section, not a wait for a condition
		head += float64(counts[0].Load()-before[0]) / hold.Minutes()
		follower += float64(counts[1].Load()-before[1]) / hold.Minutes()
		if err := l.Release(ctx); err != nil {
			b.Fatalf("Release: %v", err)
		}
		wg.Wait()
		n++
	}
	b.ReportMetric(head/float64(n), "head-req/min")
	b.ReportMetric(follower/float64(n), "follower-req/min")
}

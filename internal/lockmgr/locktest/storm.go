package locktest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// StormConfig is a lock storm: Workers clients (each its own backend client,
// like as many processes) each run Cycles critical sections on one key with
// a generous lock timeout.
type StormConfig struct {
	Workers, Cycles int
	// Section is how long each holder keeps the lock (simulated work).
	Section time.Duration
	// Disrupt, when set, runs once in the background when a third of the
	// sections are done (a failover, a restart); the storm must ride it out.
	Disrupt func(t *testing.T)
	// Options of every worker's Manager.
	Options lockmgr.Options
}

// StormCycles returns n, or DEPLOYER_STORM_CYCLES when set (to run the
// longer storms of docs/locking.md by hand).
func StormCycles(n int) int {
	if v, err := strconv.Atoi(os.Getenv("DEPLOYER_STORM_CYCLES")); err == nil && v > 0 {
		return v
	}
	return n
}

// StormResult is what a storm measured.
type StormResult struct {
	Sections int
	// LongestWait is the longest single Acquire; MaxOvertakes the most
	// sections others began between a worker joining the queue and its
	// own acquisition.
	LongestWait  time.Duration
	MaxOvertakes int
	Retried      int // passing backend failures the workers reported
}

// Storm runs c against newBackend's store and checks what a user would:
// every Acquire succeeds within its timeout, no two sections overlap, no
// update is lost (a read-modify-write counter inside the sections), fences
// grow strictly in the order the sections ran, and the queue is fair: no
// waiter is overtaken by more than one section per other worker (plus one,
// for a newcomer that found the lock free between a release and the next
// acquisition).
func Storm(t *testing.T, newBackend func(t *testing.T) lockmgr.Backend, c StormConfig) StormResult {
	t.Helper()
	key := lockmgr.CustomKey("storm-" + uniqueName(t))
	var (
		mu        sync.Mutex
		inside    int
		counter   int // read-modify-write under the lock
		sections  int // sections begun (the order of acquisition)
		lastFence int64
		res       StormResult
		disrupt   sync.Once
		disrupted = make(chan struct{})
	)
	if c.Disrupt == nil {
		close(disrupted)
	}
	if c.Options.MaxRetryInterval == 0 {
		c.Options.MaxRetryInterval = 200 * time.Millisecond
	}
	errs := make(chan error, c.Workers)
	var wg sync.WaitGroup
	for w := range c.Workers {
		b := newBackend(t)
		t.Cleanup(func() { _ = b.Close() })
		wg.Go(func() {
			for cycle := range c.Cycles {
				joined := -1 // sections begun when this worker joined the queue
				o := c.Options
				o.OnWait = func(ev lockmgr.WaitEvent) {
					mu.Lock()
					defer mu.Unlock()
					if ev.Retrying != nil {
						res.Retried++
					}
					if ev.Position > 0 && joined < 0 {
						joined = sections
					}
				}
				m := lockmgr.NewManager(b, o)
				start := time.Now()
				l, err := m.Acquire(context.Background(), lockmgr.Request{Key: key, LockedBy: fmt.Sprintf("worker-%d", w),
					Timeout: 5 * time.Minute, Metadata: lockmgr.Metadata{Operation: "exec"}})
				if err != nil {
					errs <- fmt.Errorf("worker %d cycle %d: Acquire: %w", w, cycle, err)
					return
				}
				waited := time.Since(start)
				mu.Lock()
				inside++
				if inside > 1 {
					errs <- fmt.Errorf("worker %d cycle %d entered while another section ran", w, cycle)
				}
				if f := l.Record().Fence; f <= lastFence {
					errs <- fmt.Errorf("worker %d cycle %d: fence %d after fence %d", w, cycle, f, lastFence)
				} else {
					lastFence = f
				}
				if joined >= 0 {
					res.MaxOvertakes = max(res.MaxOvertakes, sections-joined)
				}
				res.LongestWait = max(res.LongestWait, waited)
				sections++
				if c.Disrupt != nil && sections == c.Workers*c.Cycles/3 {
					disrupt.Do(func() {
						go func() { defer close(disrupted); c.Disrupt(t) }()
					})
				}
				v := counter
				mu.Unlock()
				time.Sleep(c.Section) // simulated work, not a wait for a condition
				mu.Lock()
				counter = v + 1
				inside--
				mu.Unlock()
				if err := l.Release(context.Background()); err != nil {
					errs <- fmt.Errorf("worker %d cycle %d: Release: %w", w, cycle, err)
					return
				}
			}
		})
	}
	wg.Wait()
	<-disrupted
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := c.Workers * c.Cycles
	if counter != want {
		t.Errorf("%d updates survived of %d: lost updates", counter, want)
	}
	res.Sections = sections
	if res.MaxOvertakes > c.Workers {
		t.Errorf("a waiter was overtaken by %d sections, more than one per other worker (%d)", res.MaxOvertakes, c.Workers-1)
	}
	t.Logf("storm: %d workers x %d cycles of %s: longest wait %s (%.2f sections), most overtakes %d, %d backend failures waited out",
		c.Workers, c.Cycles, c.Section, res.LongestWait.Round(time.Millisecond),
		float64(res.LongestWait)/float64(max(c.Section, time.Millisecond)), res.MaxOvertakes, res.Retried)
	return res
}

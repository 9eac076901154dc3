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
	if c.Options.MaxRetryInterval == 0 {
		c.Options.MaxRetryInterval = 200 * time.Millisecond
	}
	s := &storm{t: t, c: c, key: lockmgr.CustomKey("storm-" + uniqueName(t)),
		disrupted: make(chan struct{}), errs: make(chan error, c.Workers)}
	if c.Disrupt == nil {
		close(s.disrupted)
	}
	var wg sync.WaitGroup
	for w := range c.Workers {
		b := newBackend(t)
		t.Cleanup(func() { _ = b.Close() })
		wg.Go(func() {
			for cycle := range c.Cycles {
				if err := s.cycle(b, w, cycle); err != nil {
					s.errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	<-s.disrupted
	close(s.errs)
	for err := range s.errs {
		t.Error(err)
	}
	res := s.res
	if want := c.Workers * c.Cycles; s.counter != want {
		t.Errorf("%d updates survived of %d: lost updates", s.counter, want)
	}
	res.Sections = s.sections
	if res.MaxOvertakes > c.Workers {
		t.Errorf("a waiter was overtaken by %d sections, more than one per other worker (%d)", res.MaxOvertakes, c.Workers-1)
	}
	t.Logf("storm: %d workers x %d cycles of %s: longest wait %s (%.2f sections), most overtakes %d, %d backend failures waited out",
		c.Workers, c.Cycles, c.Section, res.LongestWait.Round(time.Millisecond),
		float64(res.LongestWait)/float64(max(c.Section, time.Millisecond)), res.MaxOvertakes, res.Retried)
	return res
}

// storm is one Storm's shared bookkeeping, under mu.
type storm struct {
	t   *testing.T
	c   StormConfig
	key string

	mu        sync.Mutex
	inside    int
	counter   int // read-modify-write under the lock
	sections  int // sections begun (the order of acquisition)
	lastFence int64
	res       StormResult
	disrupt   sync.Once
	disrupted chan struct{}
	errs      chan error
}

// cycle is one critical section of worker w on b: acquire, enter, work,
// leave, release. It returns the error that ends the worker.
func (s *storm) cycle(b lockmgr.Backend, w, cycle int) error {
	joined := -1 // sections begun when this worker joined the queue
	o := s.c.Options
	o.OnWait = func(ev lockmgr.WaitEvent) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if ev.Retrying != nil {
			s.res.Retried++
		}
		if ev.Position > 0 && joined < 0 {
			joined = s.sections
		}
	}
	m := lockmgr.NewManager(b, o)
	start := time.Now()
	l, err := m.Acquire(context.Background(), lockmgr.Request{Key: s.key, LockedBy: fmt.Sprintf("worker-%d", w),
		Timeout: 5 * time.Minute, Metadata: lockmgr.Metadata{Operation: "exec"}})
	if err != nil {
		return fmt.Errorf("worker %d cycle %d: Acquire: %w", w, cycle, err)
	}
	v := s.enter(w, cycle, l.Record().Fence, &joined, time.Since(start))
	time.Sleep(s.c.Section) // simulated work, not a wait for a condition
	s.mu.Lock()
	s.counter = v + 1
	s.inside--
	s.mu.Unlock()
	if err := l.Release(context.Background()); err != nil {
		return fmt.Errorf("worker %d cycle %d: Release: %w", w, cycle, err)
	}
	return nil
}

// enter records a section begun with fence after waited (overlap, fence
// order, overtakes since *joined, which OnWait sets under mu), starts Disrupt a third of the way, and
// returns the counter as read inside the section.
func (s *storm) enter(w, cycle int, fence int64, joined *int, waited time.Duration) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inside++
	if s.inside > 1 {
		s.errs <- fmt.Errorf("worker %d cycle %d entered while another section ran", w, cycle)
	}
	if fence <= s.lastFence {
		s.errs <- fmt.Errorf("worker %d cycle %d: fence %d after fence %d", w, cycle, fence, s.lastFence)
	} else {
		s.lastFence = fence
	}
	if *joined >= 0 {
		s.res.MaxOvertakes = max(s.res.MaxOvertakes, s.sections-*joined)
	}
	s.res.LongestWait = max(s.res.LongestWait, waited)
	s.sections++
	if s.c.Disrupt != nil && s.sections == s.c.Workers*s.c.Cycles/3 {
		s.disrupt.Do(func() {
			go func() { defer close(s.disrupted); s.c.Disrupt(s.t) }()
		})
	}
	return s.counter
}

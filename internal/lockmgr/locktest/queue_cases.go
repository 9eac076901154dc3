package locktest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// waiter is an Acquire running in the background.
type waiter struct {
	name   string
	queued chan int // positions reported while waiting
	got    chan result
}

type result struct {
	l   *lockmgr.Lease
	err error
}

// startWaiter starts m.Acquire(key) with timeout; it reports each queue
// position it is told. With hold set, the waiter calls it holding the lease,
// then releases it (the result then carries no lease).
func (s *suite) startWaiter(ctx context.Context, m *lockmgr.Manager, key, name string, timeout time.Duration, hold func()) *waiter {
	w := &waiter{name: name, queued: make(chan int, 64), got: make(chan result, 1)}
	go func() {
		l, err := m.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: name, Timeout: timeout,
			Metadata: lockmgr.Metadata{Operation: "deploy"},
			OnWait: func(ev lockmgr.WaitEvent) {
				if ev.Position > 0 {
					select {
					case w.queued <- ev.Position:
					default:
					}
				}
			}})
		if err == nil && hold != nil {
			hold()
			err = l.Release(context.Background())
			l = nil
		}
		w.got <- result{l, err}
	}()
	return w
}

// waitQueued waits until w reports a queue position.
func (w *waiter) waitQueued(t *testing.T) int {
	t.Helper()
	select {
	case p := <-w.queued:
		return p
	case r := <-w.got:
		t.Fatalf("%s returned %v, %v before it queued", w.name, r.l, r.err)
	case <-time.After(waitLimit):
		t.Fatalf("%s never reported a queue position", w.name)
	}
	return 0
}

func (w *waiter) result(t *testing.T) result {
	t.Helper()
	select {
	case r := <-w.got:
		return r
	case <-time.After(waitLimit):
		t.Fatalf("%s did not return", w.name)
	}
	return result{}
}

// testQueueOrder: N waiters registered in a known order (each one after the
// previous reported its position) acquire in that order, whichever polls
// first, when the holder releases.
func testQueueOrder(t *testing.T, s *suite) {
	const n = 4
	holder := s.manager(lockmgr.Options{})
	key := s.componentKey("svc", "api")
	first := s.mustTake(holder, key, "holder@ci")
	order := make(chan string, n)
	var ws []*waiter
	for i := range n {
		m := s.manager(lockmgr.Options{})
		// Alternate the stack key and the component key: one queue.
		k := key
		if i%2 == 1 {
			k = s.stackKey()
		}
		name := fmt.Sprintf("waiter-%d", i)
		// Sent while holding the lease: the channel's order is the order
		// of acquisition.
		w := s.startWaiter(context.Background(), m, k, name, waitLimit, func() { order <- name })
		if pos := w.waitQueued(t); pos != i+1 {
			t.Errorf("%s queued at position %d, want %d", w.name, pos, i+1)
		}
		ws = append(ws, w)
	}
	waiters, err := holder.Waiters(context.Background(), s.stackKey())
	if err != nil {
		t.Fatalf("Waiters: %v", err)
	}
	if len(waiters) != n {
		t.Fatalf("Waiters lists %d, want %d: %+v", len(waiters), n, waiters)
	}
	for i, w := range waiters {
		if w.LockedBy != ws[i].name || w.Position != i+1 {
			t.Errorf("waiter %d is %s at position %d, want %s at %d", i, w.LockedBy, w.Position, ws[i].name, i+1)
		}
	}
	release(t, first)
	for _, w := range ws {
		if r := w.result(t); r.err != nil {
			t.Errorf("%s: %v", w.name, r.err)
		}
	}
	close(order)
	i := 0
	for name := range order {
		if name != ws[i].name {
			t.Errorf("acquisition %d went to %s, want %s (registration order)", i, name, ws[i].name)
		}
		i++
	}
}

// testQueueDeadWaiterSkipped: a waiter that dies (kill -9: its record stays,
// never renewed) holds up the ones behind it only until its record expires;
// then the next waiter acquires.
func testQueueDeadWaiterSkipped(t *testing.T, s *suite) {
	ttl := 2 * time.Second
	o := lockmgr.Options{TTL: time.Minute, StaleAfter: ttl, HeartbeatInterval: ttl / 4}
	holder, dead, live := s.manager(o), s.manager(o), s.manager(o)
	key := lockmgr.CustomKey("q-" + uniqueName(t))
	first := s.mustTake(holder, key, "holder@ci")
	ghost, err := dead.Enqueue(context.Background(), lockmgr.Request{Key: key, LockedBy: "killed@ci"})
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	w := s.startWaiter(context.Background(), live, key, "live@ci", waitLimit, nil)
	if pos := w.waitQueued(t); pos != 2 {
		t.Errorf("live waiter behind a dead one queued at position %d, want 2", pos)
	}
	release(t, first)
	r := w.result(t)
	if r.err != nil {
		t.Fatalf("the waiter behind a dead one: %v", r.err)
	}
	if got := r.l.Record().LockedAt; got <= ghost.ExpiresAt {
		t.Errorf("the waiter behind a dead one acquired at %d, before the dead waiter's record expired (%d)", got, ghost.ExpiresAt)
	}
	// A waiter's record goes while its work starts, at the latest when it
	// releases.
	release(t, r.l)
	ws, err := live.Waiters(context.Background(), key)
	if err != nil {
		t.Fatalf("Waiters: %v", err)
	}
	for _, x := range ws {
		if x.Position != 0 {
			t.Errorf("after the handoff, waiter %s is still live at position %d", x.LockedBy, x.Position)
		}
	}
}

// testQueueTimedOutWaiterLeaves: a waiter that gives up (timeout, or its
// context cancelled: Ctrl-C) removes its record; the waiter behind it is not
// held up by it.
func testQueueTimedOutWaiterLeaves(t *testing.T, s *suite) {
	o := lockmgr.Options{StaleAfter: time.Hour}
	holder, quitter, canceller, next := s.manager(o), s.manager(o), s.manager(o), s.manager(o)
	key := lockmgr.CustomKey("q-" + uniqueName(t))
	first := s.mustTake(holder, key, "holder@ci")

	// Times out: the shortest wait that still queues.
	q := s.startWaiter(context.Background(), quitter, key, "quitter@ci", 300*time.Millisecond, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := s.startWaiter(ctx, canceller, key, "ctrl-c@ci", waitLimit, nil)
	c.waitQueued(t)
	n := s.startWaiter(context.Background(), next, key, "next@ci", waitLimit, nil)
	n.waitQueued(t)
	var held *lockmgr.HeldError
	if r := q.result(t); !errors.As(r.err, &held) || held.Record.LockID != first.Record().LockID {
		t.Fatalf("a waiter that timed out = %v, %v; want *HeldError naming the holder", r.l, r.err)
	}
	cancel()
	if r := c.result(t); r.err == nil {
		t.Fatalf("a waiter whose context was cancelled acquired")
	}
	ws, err := holder.Waiters(context.Background(), key)
	if err != nil {
		t.Fatalf("Waiters: %v", err)
	}
	if len(ws) != 1 || ws[0].LockedBy != "next@ci" || ws[0].Position != 1 {
		t.Errorf("after two waiters gave up, the queue is %+v; want only next@ci at position 1", ws)
	}
	release(t, first)
	r := n.result(t)
	if r.err != nil {
		t.Fatalf("next waiter: %v", r.err)
	}
	release(t, r.l)
}

// testStorm: 8 clients take one key in turn many times; no overlap, no lost
// update, strictly growing fences, no waiter overtaken more than once per
// other worker.
func testStorm(t *testing.T, s *suite) {
	Storm(t, s.newBackend, StormConfig{Workers: 8, Cycles: StormCycles(8), Section: 5 * time.Millisecond})
}

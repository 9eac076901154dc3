package locktest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// waitLimit bounds a wait for something that must happen (a lease context
// cancelled, a waiter reporting); reaching it fails the test. It is far above
// what a loaded machine needs: it only turns a hang into a failure.
const waitLimit = 2 * time.Minute

// forever is the lock timeout of workers whose test is bounded by the work
// they do (a number of critical sections), not by the clock.
const forever = time.Duration(math.MaxInt64)

// manager returns a Manager over a new client, with short retries for tests.
func (s *suite) manager(o lockmgr.Options) *lockmgr.Manager {
	if o.MaxRetryInterval == 0 {
		o.MaxRetryInterval = 50 * time.Millisecond
	}
	return lockmgr.NewManager(s.client(), o)
}

// take acquires key at once (Timeout 0) and releases it when the test ends.
func (s *suite) take(m *lockmgr.Manager, key, by string) (*lockmgr.Lease, error) {
	l, err := m.Acquire(context.Background(), lockmgr.Request{Key: key, LockedBy: by, Metadata: lockmgr.Metadata{Operation: "deploy"}})
	if err == nil {
		s.t.Cleanup(func() { _ = l.Release(context.Background()) })
	}
	return l, err
}

func (s *suite) mustTake(m *lockmgr.Manager, key, by string) *lockmgr.Lease {
	s.t.Helper()
	l, err := s.take(m, key, by)
	if err != nil {
		s.t.Fatalf("Acquire(%s) by %s: %v", key, by, err)
	}
	return l
}

// mustConflict checks that key cannot be taken while holder's key is held, and
// that the refused attempt leaves no record of its own behind.
func (s *suite) mustConflict(m *lockmgr.Manager, key string, holder *lockmgr.Lease) {
	s.t.Helper()
	_, err := s.take(m, key, "bob@desk")
	var held *lockmgr.HeldError
	if !errors.As(err, &held) {
		s.t.Fatalf("Acquire(%s) while %s is held = %v, want *lockmgr.HeldError", key, holder.Record().LockKey, err)
	}
	if held.Record.LockID != holder.Record().LockID {
		s.t.Errorf("Acquire(%s) names holder %s (%s), want %s (%s)", key,
			held.Record.LockKey, held.Record.LockID, holder.Record().LockKey, holder.Record().LockID)
	}
	if key != holder.Record().LockKey {
		if rec, err := m.Backend().Get(context.Background(), key); !errors.Is(err, lockmgr.ErrNotFound) {
			s.t.Errorf("refused Acquire(%s) left a record behind: %+v, %v", key, rec, err)
		}
	}
}

func release(t *testing.T, l *lockmgr.Lease) {
	t.Helper()
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release(%s): %v", l.Record().LockKey, err)
	}
}

func testManagerHierarchy(t *testing.T, s *suite) {
	alice, bob := s.manager(lockmgr.Options{}), s.manager(lockmgr.Options{})
	api, web := s.componentKey("svc", "api"), s.componentKey("svc", "web")
	svc, other := lockmgr.ServiceKey(s.stack, s.env, "svc"), lockmgr.ServiceKey(s.stack, s.env, "other")

	// A stack lock blocks its components and services.
	stack := s.mustTake(alice, s.stackKey(), "alice@laptop")
	s.mustConflict(bob, api, stack)
	s.mustConflict(bob, svc, stack)
	release(t, stack)

	// A component lock blocks its stack; two components of one service coexist.
	apiLease := s.mustTake(alice, api, "alice@laptop")
	s.mustConflict(bob, s.stackKey(), apiLease)
	webLease := s.mustTake(bob, web, "bob@desk")
	// Their service conflicts with both; another service does not.
	_, err := s.take(bob, svc, "bob@desk")
	var held *lockmgr.HeldError
	if !errors.As(err, &held) || (held.Record.LockKey != api && held.Record.LockKey != web) {
		t.Errorf("Acquire(%s) while its components are held = %v, want *HeldError naming one of them", svc, err)
	}
	s.mustTake(bob, other, "bob@desk")
	release(t, apiLease)
	release(t, webLease)

	// A service lock blocks its own components and not another service's.
	svcLease := s.mustTake(alice, svc, "alice@laptop")
	s.mustConflict(bob, api, svcLease)
	s.mustTake(bob, s.componentKey("third", "api"), "bob@desk")

	// Other environments and stacks never conflict, even at stack level.
	s.mustTake(bob, lockmgr.StackKey(s.stack, s.env+"2"), "bob@desk")
	s.mustTake(bob, lockmgr.StackKey(s.stack+"-2", s.env), "bob@desk")
	s.mustTake(bob, lockmgr.ComponentKey(s.stack, s.env+"3", "svc", "api"), "bob@desk")
}

func testManagerMutualExclusion(t *testing.T, s *suite) {
	const workers, rounds = 8, 3
	var clients []*lockmgr.Manager
	for range 3 {
		clients = append(clients, s.manager(lockmgr.Options{MaxRetryInterval: 20 * time.Millisecond}))
	}
	keys := []string{s.stackKey(), s.componentKey("svc", "a"), s.componentKey("svc", "b"), s.componentKey("svc", "a"), lockmgr.ServiceKey(s.stack, s.env, "svc"), s.componentKey("db", "main")}

	var mu sync.Mutex
	holding := map[int]string{} // worker -> key in its critical section
	overlap := make(chan string, workers*rounds)
	var sections int
	// No deadline: on a slow or loaded server every worker still does its
	// rounds; the bound is the work done (workers x rounds sections).
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		m := clients[w%len(clients)]
		wg.Go(func() {
			for r := range rounds {
				key := keys[(w+r)%len(keys)]
				l, err := m.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: fmt.Sprintf("worker-%d", w), Timeout: forever})
				if err != nil {
					errs <- fmt.Errorf("worker %d round %d: Acquire(%s): %w", w, r, key, err)
					return
				}
				mu.Lock()
				for other, k := range holding {
					if lockmgr.Conflicts(k, key) {
						overlap <- fmt.Sprintf("worker %d entered %s while worker %d held %s", w, key, other, k)
					}
				}
				holding[w] = key
				sections++
				mu.Unlock()
				time.Sleep(time.Millisecond) // simulated deploy work, not a wait for a condition
				mu.Lock()
				delete(holding, w)
				mu.Unlock()
				if err := l.Release(context.Background()); err != nil {
					errs <- fmt.Errorf("worker %d: Release(%s): %w", w, key, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(overlap)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for msg := range overlap {
		t.Error(msg)
	}
	if sections != workers*rounds {
		t.Errorf("%d critical sections ran, want %d", sections, workers*rounds)
	}
}

func testManagerLeaseLost(t *testing.T, s *suite) {
	holder := s.manager(lockmgr.Options{HeartbeatInterval: 20 * time.Millisecond})
	operator := s.manager(lockmgr.Options{})
	lease := s.mustTake(holder, s.stackKey(), "alice@laptop")
	if err := operator.ForceUnlock(context.Background(), s.stackKey(), lease.Record().LockID, "ops@console"); err != nil {
		t.Fatalf("ForceUnlock: %v", err)
	}
	select {
	case <-lease.Context().Done():
	case <-time.After(waitLimit):
		t.Fatalf("lease context not cancelled %s after its record was force-unlocked", waitLimit)
	}
	if cause := context.Cause(lease.Context()); !errors.Is(cause, lockmgr.ErrLockLost) {
		t.Errorf("lease context cause = %v, want ErrLockLost", cause)
	}
	if err := lease.Release(context.Background()); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("Release of a force-unlocked lease = %v, want ErrLockLost", err)
	}
	s.mustTake(operator, s.stackKey(), "bob@desk")
}

func testManagerWaits(t *testing.T, s *suite) {
	alice := s.manager(lockmgr.Options{})
	waiting := make(chan lockmgr.Record, 1)
	bob := s.manager(lockmgr.Options{OnWait: func(ev lockmgr.WaitEvent) {
		select {
		case waiting <- ev.Holder:
		default:
		}
	}})
	first := s.mustTake(alice, s.stackKey(), "alice@laptop")

	type result struct {
		l   *lockmgr.Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := bob.Acquire(context.Background(), lockmgr.Request{Key: s.componentKey("svc", "api"), LockedBy: "bob@desk", Timeout: waitLimit})
		got <- result{l, err}
	}()
	select {
	case h := <-waiting:
		if h.LockID != first.Record().LockID {
			t.Errorf("OnWait got holder %s (%s), want %s", h.LockKey, h.LockID, first.Record().LockID)
		}
	case r := <-got:
		t.Fatalf("Acquire returned %v, %v while the stack lock was held; want it to wait", r.l, r.err)
	case <-time.After(waitLimit):
		t.Fatal("Acquire with Timeout never reported waiting for the holder")
	}
	release(t, first)
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("Acquire after the holder released: %v", r.err)
		}
		release(t, r.l)
	case <-time.After(waitLimit):
		t.Fatal("Acquire with Timeout did not get the lock after the holder released")
	}
}

// testManagerRetriesAndKeep: MaxRetries gives up after that many retries
// whatever the Timeout; a kept lease leaves its record, which blocks others
// until it expires, and Held counts leases until they are released or kept.
//
// The retried lease lives a minute, so that no stall of a loaded machine
// lets it expire under bob's retries (bob would then take it, which says
// nothing of MaxRetries); the kept one lives 10 s, so that its expiry is
// seen soon, and is read right after Keep.
func testManagerRetriesAndKeep(t *testing.T, s *suite) {
	alice := s.manager(lockmgr.Options{TTL: time.Minute, HeartbeatInterval: time.Second, StaleAfter: time.Minute})
	bob := s.manager(lockmgr.Options{TTL: time.Minute, HeartbeatInterval: time.Second, StaleAfter: time.Minute})
	key := lockmgr.CustomKey("guard-" + uniqueName(t))
	ctx := context.Background()

	held := s.mustTake(alice, key, "alice@laptop")
	if alice.Held() != 1 {
		t.Fatalf("Held = %d with one lease", alice.Held())
	}
	var waits []lockmgr.Record
	_, err := bob.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: "bob@desk", Timeout: time.Hour, MaxRetries: 3,
		OnWait: func(ev lockmgr.WaitEvent) {
			if !ev.Done {
				waits = append(waits, ev.Holder)
			}
		}})
	wantHeld(t, err, held.Record())
	if len(waits) != 3 || waits[0].LockID != held.Record().LockID {
		t.Fatalf("with MaxRetries 3: %d waits (%v), want 3 naming the holder", len(waits), waits)
	}
	release(t, held)
	if alice.Held() != 0 {
		t.Fatalf("Held = %d after Release", alice.Held())
	}

	ttl := 10 * time.Second
	keeper := s.manager(lockmgr.Options{TTL: ttl, HeartbeatInterval: ttl / 4, StaleAfter: ttl})
	keptKey := lockmgr.CustomKey("guard-kept-" + uniqueName(t))
	kept := s.mustTake(keeper, keptKey, "alice@laptop")
	kept.Keep()
	if keeper.Held() != 0 {
		t.Fatalf("Held = %d after Keep", keeper.Held())
	}
	if err := kept.Release(ctx); err != nil {
		t.Fatalf("Release after Keep: %v", err)
	}
	rec, err := keeper.Backend().Get(ctx, keptKey)
	if err != nil || rec.LockID != kept.Record().LockID {
		t.Fatalf("a kept lease's record must stay: %+v, %v", rec, err)
	}
	_, err = bob.Acquire(ctx, lockmgr.Request{Key: keptKey, LockedBy: "bob@desk"})
	wantHeld(t, err, kept.Record())
	// Once it expires, the key is free (bounded by the TTL, polled by work).
	next, err := bob.Acquire(ctx, lockmgr.Request{Key: keptKey, LockedBy: "bob@desk", Timeout: waitLimit})
	if err != nil {
		t.Fatalf("a kept lease must expire: %v", err)
	}
	release(t, next)
}

// testManagerClockSkew runs a Manager whose clock is 10 minutes off the
// backend's (an injected clock): on a backend that tells its time the lease is
// refused with the skew in the message, and no record is written; within the
// bound it is granted.
func testManagerClockSkew(t *testing.T, s *suite) {
	b := s.client()
	if _, ok := b.(lockmgr.ServerClock); !ok {
		t.Logf("%T cannot tell its time: nothing to compare", b)
		return
	}
	for _, off := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
		m := lockmgr.NewManager(b, lockmgr.Options{Now: func() time.Time { return time.Now().Add(off) }})
		_, err := m.Acquire(context.Background(), lockmgr.Request{Key: s.stackKey(), LockedBy: "alice@laptop"})
		var skew *lockmgr.ClockSkewError
		if !errors.As(err, &skew) {
			t.Fatalf("Acquire with a clock %s off the backend's = %v, want *lockmgr.ClockSkewError", off, err)
		}
		// HTTP Date headers carry whole seconds.
		if d := skew.Skew + off; d < -2*time.Second || d > 2*time.Second {
			t.Errorf("measured skew %s, want about %s", skew.Skew, -off)
		}
		if want := abs(skew.Skew).Round(time.Second).String(); !strings.Contains(err.Error(), want) {
			t.Errorf("skew error %q does not give the skew (%s)", err, want)
		}
		s.wantNotFound(b, s.stackKey())
	}
	m := lockmgr.NewManager(b, lockmgr.Options{Now: func() time.Time { return time.Now().Add(5 * time.Second) }})
	l, err := m.Acquire(context.Background(), lockmgr.Request{Key: s.stackKey(), LockedBy: "alice@laptop"})
	if err != nil {
		t.Fatalf("Acquire with a clock 5s off (within the 30s bound): %v", err)
	}
	release(t, l)
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

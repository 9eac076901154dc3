package locktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

func testAcquireFree(t *testing.T, s *suite) {
	a := s.client()
	rec := s.acquire(a, s.stackKey(), "alice@laptop")
	s.wantRecord(a, rec)
	s.wantRecord(s.client(), rec) // visible to an independent client
}

func testHeld(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	holder := s.acquire(a, s.stackKey(), "alice@laptop")

	_, err := b.TryAcquire(context.Background(), s.record(s.stackKey(), "bob@desk", s.now.Add(time.Minute), time.Hour))
	wantHeld(t, err, holder)
	// expiresAt == lockedAt of the newcomer is still live: only expiresAt < lockedAt is free.
	_, err = b.TryAcquire(context.Background(), s.record(s.stackKey(), "bob@desk", s.now.Add(time.Hour), time.Hour))
	wantHeld(t, err, holder)
	// The same client retrying does not take its own key twice either.
	_, err = a.TryAcquire(context.Background(), s.record(s.stackKey(), "alice@laptop", s.now, time.Hour))
	wantHeld(t, err, holder)
	s.wantRecord(b, holder)
}

func testReleaseReacquire(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	first := s.acquire(a, s.stackKey(), "alice@laptop")
	if err := a.Release(context.Background(), first.LockKey, first.LockID); err != nil {
		t.Fatalf("Release by the holder: %v", err)
	}
	s.wantNotFound(b, first.LockKey)
	second := s.acquire(b, s.stackKey(), "bob@desk")
	s.wantRecord(a, second)
	if second.Fence <= first.Fence {
		t.Errorf("fence after release = %d, want > %d", second.Fence, first.Fence)
	}
}

func testFence(t *testing.T, s *suite) {
	clients := []lockmgr.Backend{s.client(), s.client()}
	key := s.componentKey("svc", "api")
	var last int64
	at := s.now
	for i := range 6 {
		c := clients[i%2]
		rec := s.record(key, fmt.Sprintf("holder-%d", i), at, time.Minute)
		got := s.acquireRec(c, rec)
		if got.Fence <= last {
			t.Errorf("acquisition %d: fence %d, want > %d", i, got.Fence, last)
		}
		last = got.Fence
		if i%2 == 0 {
			// release before the next acquisition
			if err := c.Release(context.Background(), key, got.LockID); err != nil {
				t.Fatalf("Release: %v", err)
			}
			at = at.Add(time.Second)
		} else {
			// leave it to expire: the next one takes over after expiresAt
			at = at.Add(2 * time.Minute)
		}
	}
	// Another key's fence does not depend on this one's, but must also be positive.
	other := s.acquire(clients[0], s.componentKey("svc", "web"), "x")
	if other.Fence <= 0 {
		t.Errorf("fence of a fresh key = %d, want > 0", other.Fence)
	}
}

func testExpiredTakeover(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	old := s.acquireRec(a, s.record(s.stackKey(), "alice@laptop", s.now.Add(-2*time.Hour), time.Hour))
	// No sleeping: b's lockedAt is after old's expiresAt in logical time.
	next := s.acquireRec(b, s.record(s.stackKey(), "bob@desk", s.now, time.Hour))
	if next.Fence <= old.Fence {
		t.Errorf("fence after takeover = %d, want > %d", next.Fence, old.Fence)
	}
	s.wantRecord(a, next)
}

func testWrongLockID(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	holder := s.acquire(a, s.stackKey(), "alice@laptop")
	ctx := context.Background()

	if err := b.Release(ctx, holder.LockKey, "not-"+holder.LockID); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("Release with a wrong lockId = %v, want ErrLockLost", err)
	}
	later := s.now.Add(30 * time.Minute)
	if err := b.Heartbeat(ctx, holder.LockKey, "not-"+holder.LockID, later, later.Add(time.Hour)); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("Heartbeat with a wrong lockId = %v, want ErrLockLost", err)
	}
	s.wantRecord(a, holder) // neither removed nor extended

	free := s.componentKey("svc", "free")
	if err := b.Release(ctx, free, holder.LockID); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("Release of a key nobody holds = %v, want ErrLockLost", err)
	}
	if err := b.Heartbeat(ctx, free, holder.LockID, later, later.Add(time.Hour)); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("Heartbeat of a key nobody holds = %v, want ErrLockLost", err)
	}
	s.wantNotFound(a, free) // a heartbeat never creates a record
}

func testHeartbeat(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	rec := s.acquire(a, s.stackKey(), "alice@laptop")
	at := s.now.Add(45 * time.Second)
	if err := a.Heartbeat(context.Background(), rec.LockKey, rec.LockID, at, at.Add(time.Hour)); err != nil {
		t.Fatalf("Heartbeat by the holder: %v", err)
	}
	want := rec
	want.LastHeartbeat, want.ExpiresAt = at.Unix(), at.Add(time.Hour).Unix()
	s.wantRecord(b, want)

	// The extension is what the acquire condition sees: still held after the
	// original expiry.
	_, err := b.TryAcquire(context.Background(), s.record(rec.LockKey, "bob@desk", s.now.Add(time.Hour+30*time.Second), time.Hour))
	wantHeld(t, err, want)
}

func testStaleHolder(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	stale := s.acquireRec(a, s.record(s.stackKey(), "alice@laptop", s.now.Add(-2*time.Hour), time.Hour))
	next := s.acquire(b, s.stackKey(), "bob@desk")
	ctx := context.Background()
	if err := a.Heartbeat(ctx, stale.LockKey, stale.LockID, s.now, s.now.Add(time.Hour)); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("Heartbeat by the taken-over holder = %v, want ErrLockLost", err)
	}
	if err := a.Release(ctx, stale.LockKey, stale.LockID); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("Release by the taken-over holder = %v, want ErrLockLost", err)
	}
	s.wantRecord(a, next)
}

func testGetNotFound(t *testing.T, s *suite) {
	s.wantNotFound(s.client(), s.stackKey())
}

func testList(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	ctx := context.Background()
	var want []lockmgr.Record
	for _, key := range []string{
		s.stackKey(),
		s.componentKey("svc", "api"),
		lockmgr.ServiceKey(s.stack, s.env, "svc"),
	} {
		want = append(want, s.acquire(a, key, "alice@laptop"))
	}
	expired := s.acquireRec(b, s.record(s.componentKey("svc", "old"), "bob@desk", s.now.Add(-3*time.Hour), time.Hour))
	want = append(want, expired)
	// Neighbours that share the text prefix or the stack but not the environment.
	eeKey := lockmgr.StackKey(s.stack, s.env+"e")
	s.acquire(a, eeKey, "carol@box")
	otherStack := lockmgr.StackKey(s.stack+"x", s.env)
	s.acquire(b, otherStack, "carol@box")

	slices.SortFunc(want, func(x, y lockmgr.Record) int { return strings.Compare(x.LockKey, y.LockKey) })
	for _, c := range []lockmgr.Backend{a, b} {
		got, err := c.List(ctx, s.stackKey())
		if err != nil {
			t.Fatalf("List(%q): %v", s.stackKey(), err)
		}
		var inEnv []lockmgr.Record
		for i, r := range got {
			if !strings.HasPrefix(r.LockKey, s.stackKey()) {
				t.Errorf("List(%q) returned %q, outside the prefix", s.stackKey(), r.LockKey)
			}
			if i > 0 && got[i-1].LockKey >= r.LockKey {
				t.Errorf("List is not sorted by key: %q before %q", got[i-1].LockKey, r.LockKey)
			}
			if r.LockKey == s.stackKey() || strings.HasPrefix(r.LockKey, s.stackKey()+":") {
				inEnv = append(inEnv, r)
			}
		}
		if d := cmp.Diff(want, inEnv); d != "" {
			t.Errorf("List(%q) records of env %q, expired included (-want +got):\n%s", s.stackKey(), s.env, d)
		}
	}

	all, err := a.List(ctx, "")
	if err != nil {
		t.Fatalf("List(\"\"): %v", err)
	}
	seen := map[string]bool{}
	for _, r := range all {
		seen[r.LockKey] = true
	}
	for _, k := range []string{s.stackKey(), expired.LockKey, eeKey, otherStack} {
		if !seen[k] {
			t.Errorf("List(\"\") misses %q", k)
		}
	}

	none, err := a.List(ctx, lockmgr.StackKey(s.stack, "nothing-here"))
	if err != nil || len(none) != 0 {
		t.Errorf("List of an empty prefix = %v, %v; want no records", none, err)
	}
}

func testRace(t *testing.T, s *suite) {
	const clients, perClient = 4, 4
	var bs []lockmgr.Backend
	for range clients {
		bs = append(bs, s.client())
	}
	key := s.stackKey()
	start := make(chan struct{})
	type result struct {
		rec lockmgr.Record
		err error
	}
	results := make(chan result, clients*perClient)
	var wg sync.WaitGroup
	for i := range clients * perClient {
		rec := s.record(key, fmt.Sprintf("racer-%d", i), s.now, time.Hour)
		wg.Go(func() {
			<-start
			got, err := bs[i%clients].TryAcquire(context.Background(), rec)
			results <- result{got, err}
		})
	}
	close(start)
	wg.Wait()
	close(results)

	var winners []lockmgr.Record
	var losers []error
	for r := range results {
		var held *lockmgr.HeldError
		switch {
		case r.err == nil:
			winners = append(winners, r.rec)
		case errors.As(r.err, &held):
			losers = append(losers, r.err)
		default:
			t.Errorf("TryAcquire failed with %v, want success or *HeldError", r.err)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d of %d racing TryAcquire calls won, want exactly 1: %+v", len(winners), clients*perClient, winners)
	}
	for _, err := range losers {
		wantHeld(t, err, winners[0])
	}
	s.wantRecord(bs[0], winners[0])
}

func testCancelled(t *testing.T, s *suite) {
	b := s.client()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	key := s.stackKey()
	rec := s.record(key, "alice@laptop", s.now, time.Hour)
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error wrapping context.Canceled", op, err)
		}
	}
	_, err := b.TryAcquire(ctx, rec)
	check("TryAcquire", err)
	s.wantNotFound(b, key) // nothing was written

	held := s.acquire(b, key, "alice@laptop")
	check("Heartbeat", b.Heartbeat(ctx, key, held.LockID, s.now, s.now.Add(2*time.Hour)))
	check("Release", b.Release(ctx, key, held.LockID))
	_, err = b.Get(ctx, key)
	check("Get", err)
	_, err = b.List(ctx, key)
	check("List", err)
	s.wantRecord(b, held) // still held, not extended
}

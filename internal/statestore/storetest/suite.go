package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// Run runs the conformance suite against a state backend. newBackend must
// return, on every call, an independent client (its own connections) to the
// same store; the suite closes each one. Stores are shared between cases, so
// every case uses its own random stack name.
func Run(t *testing.T, newBackend func(t *testing.T) statestore.Backend) {
	open := func(t *testing.T) statestore.Backend {
		t.Helper()
		b := newBackend(t)
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	cases := []struct {
		name string
		fn   func(t *testing.T, open func(*testing.T) statestore.Backend)
	}{
		{"RoundTrip", testRoundTrip},
		{"FirstWrite", testFirstWrite},
		{"SerialAndLineage", testSerialAndLineage},
		{"CompareAndSwapTwoClients", testCASTwoClients},
		{"RacingSavesOneWins", testRacingSaves},
		{"StaleWriterCannotOverwrite", testStaleWriter},
		{"HistoryAndSnapshot", testHistory},
		{"HistoryOrderedBySerialNotTime", testHistoryBySerial},
		{"NotFound", testNotFound},
		{"TamperedDocument", testTampered},
		{"CancelledContext", testCancelled},
		{"LargeState", testLarge},
		{"ReadLimit", testReadLimit},
		{"ReadVersion", testReadVersion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open) })
	}
}

// UniqueStack returns a valid stack name that no other test uses.
func UniqueStack(tb testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	return "storetest-" + hex.EncodeToString(b[:])
}

const env = "production"

func mustSave(t testing.TB, s *statestore.Store, st *statestore.State, base statestore.Head) statestore.Head {
	t.Helper()
	h, err := s.Save(context.Background(), st, base, nil)
	if err != nil {
		t.Fatalf("Save serial %d on serial %d: %v", st.Serial, base.Serial, err)
	}
	if h.Serial != st.Serial || h.Lineage != st.Lineage || h.Version == "" || h.Version == base.Version {
		t.Fatalf("Save returned head %+v for serial %d lineage %s on base %+v", h, st.Serial, st.Lineage, base)
	}
	return h
}

func mustLoad(t testing.TB, s *statestore.Store, stack string) (*statestore.State, statestore.Head) {
	t.Helper()
	st, h, err := s.Load(context.Background(), stack, env)
	if err != nil {
		t.Fatalf("Load %s/%s: %v", stack, env, err)
	}
	return st, h
}

func wantConflict(t *testing.T, err error, what string) {
	t.Helper()
	var c *statestore.ConflictError
	if !errors.As(err, &c) {
		t.Fatalf("%s: got %v (%T), want *statestore.ConflictError", what, err, err)
	}
	if c.Reason == "" || c.Location == "" {
		t.Fatalf("%s: ConflictError without location or reason: %+v", what, c)
	}
}

func testRoundTrip(t *testing.T, open func(*testing.T) statestore.Backend) {
	s := statestore.New(open(t))
	stack := UniqueStack(t)
	st := SeedState(stack, env)
	head := mustSave(t, s, st, statestore.Head{})

	got, gotHead := mustLoad(t, statestore.New(open(t)), stack)
	if diff := cmp.Diff(st, got); diff != "" {
		t.Fatalf("loaded state differs from the saved one (-saved +loaded):\n%s", diff)
	}
	if gotHead != head {
		t.Fatalf("Load head %+v, Save returned %+v", gotHead, head)
	}
	if st.Checksums.Resources == "" || st.Checksums.Outputs == "" || st.Checksums.Resources == st.Checksums.Outputs {
		t.Fatalf("Save did not set distinct checksums: %+v", st.Checksums)
	}
}

func testFirstWrite(t *testing.T, open func(*testing.T) statestore.Backend) {
	s := statestore.New(open(t))
	stack := UniqueStack(t)
	noLineage := SeedState(stack, env)
	noLineage.Lineage = ""
	if _, err := s.Save(context.Background(), noLineage, statestore.Head{}, nil); err == nil {
		t.Fatal("Save of a state without lineage succeeded")
	}
	zero := SeedState(stack, env)
	zero.Serial = 0
	_, err := s.Save(context.Background(), zero, statestore.Head{}, nil)
	wantConflict(t, err, "first Save with serial 0")

	first := SeedState(stack, env)
	mustSave(t, s, first, statestore.Head{})
	again := SeedState(stack, env)
	_, err = s.Save(context.Background(), again, statestore.Head{}, nil)
	wantConflict(t, err, "second Save on the zero head")
	got, _ := mustLoad(t, s, stack)
	if got.Lineage != first.Lineage {
		t.Fatalf("a second first-write replaced the state: lineage %s, want %s", got.Lineage, first.Lineage)
	}
}

func testSerialAndLineage(t *testing.T, open func(*testing.T) statestore.Backend) {
	s := statestore.New(open(t))
	stack := UniqueStack(t)
	st := SeedState(stack, env)
	head := mustSave(t, s, st, statestore.Head{})

	same, _ := mustLoad(t, s, stack)
	_, err := s.Save(context.Background(), same, head, nil)
	wantConflict(t, err, "Save with an unchanged serial")

	other := SeedState(stack, env) // another lineage
	other.Serial = 2
	_, err = s.Save(context.Background(), other, head, nil)
	wantConflict(t, err, "Save with another lineage")

	next, _ := mustLoad(t, s, stack)
	next.Serial = 5 // gaps are allowed: only "greater" is required
	head5 := mustSave(t, s, next, head)
	got, gotHead := mustLoad(t, s, stack)
	if got.Serial != 5 || gotHead != head5 {
		t.Fatalf("after refused writes and serial 5: loaded serial %d head %+v, want 5 %+v", got.Serial, gotHead, head5)
	}
	snaps, err := s.History(context.Background(), stack, env, head5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 2 || snaps[0].Serial != 5 || snaps[1].Serial != 1 {
		t.Fatalf("history %+v, want serials [5 1]: refused writes must leave no snapshot", snaps)
	}
}

func testCASTwoClients(t *testing.T, open func(*testing.T) statestore.Backend) {
	s1, s2 := statestore.New(open(t)), statestore.New(open(t))
	stack := UniqueStack(t)
	mustSave(t, s1, SeedState(stack, env), statestore.Head{})

	a, ha := mustLoad(t, s1, stack)
	b, hb := mustLoad(t, s2, stack)
	if ha != hb {
		t.Fatalf("two clients loaded different heads: %+v and %+v", ha, hb)
	}
	a.Serial, b.Serial = 2, 2
	a.Outputs["writer"], b.Outputs["writer"] = "a", "b"
	winner := mustSave(t, s1, a, ha)
	_, err := s2.Save(context.Background(), b, hb, nil)
	wantConflict(t, err, "second Save on the same head")

	got, gotHead := mustLoad(t, s2, stack)
	if gotHead != winner || got.Outputs["writer"] != "a" {
		t.Fatalf("after the lost CAS: head %+v writer %v, want %+v and the winner's state", gotHead, got.Outputs["writer"], winner)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Fatalf("winner's state damaged (-saved +loaded):\n%s", diff)
	}
}

func testRacingSaves(t *testing.T, open func(*testing.T) statestore.Backend) {
	const racers = 8
	stack := UniqueStack(t)
	mustSave(t, statestore.New(open(t)), SeedState(stack, env), statestore.Head{})
	stores := make([]*statestore.Store, racers)
	states := make([]*statestore.State, racers)
	var base statestore.Head
	for i := range stores {
		stores[i] = statestore.New(open(t))
		states[i], base = mustLoad(t, stores[i], stack)
		states[i].Serial = 2
		states[i].Outputs["racer"] = fmt.Sprintf("racer-%d", i)
	}
	type result struct {
		racer int
		err   error
	}
	start := make(chan struct{})
	results := make(chan result, racers)
	for i := range stores {
		go func() {
			<-start
			_, err := stores[i].Save(context.Background(), states[i], base, nil)
			results <- result{i, err}
		}()
	}
	close(start)
	winner := -1
	for range racers {
		r := <-results
		if r.err != nil {
			wantConflict(t, r.err, "racing Save")
			continue
		}
		if winner >= 0 {
			t.Fatalf("racers %d and %d both saved serial 2 on the same head", winner, r.racer)
		}
		winner = r.racer
	}
	if winner < 0 {
		t.Fatalf("none of %d racing saves from one head succeeded, want exactly 1", racers)
	}
	got, _ := mustLoad(t, stores[0], stack)
	if diff := cmp.Diff(states[winner], got); diff != "" {
		t.Fatalf("state after the race is not the winner's (-winner +loaded):\n%s", diff)
	}
}

func testStaleWriter(t *testing.T, open func(*testing.T) statestore.Backend) {
	paused, next := statestore.New(open(t)), statestore.New(open(t))
	stack := UniqueStack(t)
	mustSave(t, next, SeedState(stack, env), statestore.Head{})

	old, oldHead := mustLoad(t, paused, stack) // then paused past its lease
	cur, h := mustLoad(t, next, stack)
	for serial := int64(2); serial <= 3; serial++ {
		cur.Serial = serial
		h = mustSave(t, next, cur, h)
	}
	for _, serial := range []int64{2, 3, 100} {
		old.Serial = serial
		_, err := paused.Save(context.Background(), old, oldHead, nil)
		wantConflict(t, err, "Save on a stale head")
	}
	got, gotHead := mustLoad(t, paused, stack)
	if gotHead != h || got.Serial != 3 {
		t.Fatalf("stale writer changed the state: head %+v, want %+v", gotHead, h)
	}
}

// testReadLimit: a backend refuses a document over the read limit the Store
// passes (statestore.ReadLimit) by the size the storage reports, state.json
// and snapshot alike, and reads one at the limit.
func testReadLimit(t *testing.T, open func(*testing.T) statestore.Backend) {
	b := open(t)
	stack := UniqueStack(t)
	mustSave(t, statestore.New(b), SeedState(stack, env), statestore.Head{})
	data, _, err := b.Read(context.Background(), stack, env)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(data))
	var tl *statestore.TooLargeError
	if _, _, err := b.Read(statestore.WithReadLimit(context.Background(), n-1), stack, env); !errors.As(err, &tl) || tl.Size < n || tl.Limit != n-1 {
		t.Fatalf("Read over the limit: %v, want *TooLargeError", err)
	}
	if _, _, err := b.Read(statestore.WithReadLimit(context.Background(), n), stack, env); err != nil {
		t.Fatalf("Read at the limit: %v", err)
	}
	snaps, err := b.ListSnapshots(context.Background(), stack, env)
	if err != nil || len(snaps) != 1 {
		t.Fatalf("ListSnapshots: %v %v", snaps, err)
	}
	if _, err := b.ReadSnapshot(statestore.WithReadLimit(context.Background(), n-1), stack, env, snaps[0]); !errors.As(err, &tl) {
		t.Fatalf("ReadSnapshot over the limit: %v, want *TooLargeError", err)
	}
	if _, _, err := statestore.New(b, statestore.WithMaxDocumentBytes(n-1)).Load(context.Background(), stack, env); !errors.As(err, &tl) {
		t.Fatalf("Load through a Store with a smaller limit: %v, want *TooLargeError", err)
	}
}

// testReadVersion: the backend reads the Version of state.json without the
// document (what a deploy compares under its lease,
// docs/design.md#read-once-plan-once), and it is the Version Read and Save
// give; no state is ErrNotFound, and "" through the Store.
func testReadVersion(t *testing.T, open func(*testing.T) statestore.Backend) {
	b := open(t)
	vr, ok := b.(statestore.VersionReader)
	if !ok {
		t.Fatalf("%T does not read the state's Version alone (statestore.VersionReader): a deploy would read the whole state twice", b)
	}
	s := statestore.New(b)
	ctx := context.Background()
	stack := UniqueStack(t)
	if _, err := vr.ReadVersion(ctx, stack, env); !errors.Is(err, statestore.ErrNotFound) {
		t.Fatalf("ReadVersion of no state: %v, want ErrNotFound", err)
	}
	if v, err := s.ReadVersion(ctx, stack, env); v != "" || err != nil {
		t.Fatalf("Store.ReadVersion of no state: %q, %v; want \"\", nil", v, err)
	}
	st := SeedState(stack, env)
	var head statestore.Head
	seen := map[statestore.Version]bool{}
	for i := 0; i < 2; i++ {
		head = mustSave(t, s, st, head)
		_, readVer, err := b.Read(ctx, stack, env)
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.ReadVersion(ctx, stack, env)
		if err != nil || v != readVer || v != head.Version {
			t.Errorf("serial %d: ReadVersion %q (%v), Read's %q, Save's %q: want one Version", st.Serial, v, err, readVer, head.Version)
		}
		if seen[v] {
			t.Errorf("serial %d: ReadVersion %q did not change after a Save", st.Serial, v)
		}
		seen[v] = true
		st.Serial++
	}
}

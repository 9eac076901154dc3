package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/statestore"
)

func testHistory(t *testing.T, open func(*testing.T) statestore.Backend) {
	// A clock one second apart per write, at millisecond precision.
	epoch := time.Date(2024, 1, 15, 14, 20, 0, 123_000_000, time.UTC)
	var writes int
	clock := func() time.Time { writes++; return epoch.Add(time.Duration(writes) * time.Second) }
	s := statestore.New(open(t), statestore.WithClock(clock))
	stack := UniqueStack(t)

	saved := map[int64]*statestore.State{}
	var head statestore.Head
	st := SeedState(stack, env)
	for serial := int64(1); serial <= 5; serial++ {
		st.Serial = serial
		st.Outputs["serial"] = fmt.Sprintf("written at serial %d", serial)
		head = mustSave(t, s, st, head)
		saved[serial], _ = mustLoad(t, s, stack)
	}

	reader := statestore.New(open(t))
	all, err := reader.History(context.Background(), stack, env, head, 0)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	var serials []int64
	for _, sn := range all {
		serials = append(serials, sn.Serial)
		if sn.Uncommitted {
			t.Errorf("snapshot of serial %d marked uncommitted against the head of serial %d", sn.Serial, head.Serial)
		}
		when := epoch.Add(time.Duration(sn.Serial) * time.Second)
		if !sn.Time.Equal(when) || sn.Name != statestore.SnapshotName(when, sn.Serial) {
			t.Errorf("snapshot of serial %d: time %s name %q, want %s %q", sn.Serial, sn.Time, sn.Name, when, statestore.SnapshotName(when, sn.Serial))
		}
	}
	if diff := cmp.Diff([]int64{5, 4, 3, 2, 1}, serials); diff != "" {
		t.Fatalf("History serials, newest first (-want +got):\n%s", diff)
	}
	two, err := reader.History(context.Background(), stack, env, head, 2)
	if err != nil || len(two) != 2 || two[0].Serial != 5 || two[1].Serial != 4 {
		t.Fatalf("History limit 2: %+v, %v; want serials 5 and 4", two, err)
	}
	// Against the head of serial 3 (as if the writes of 4 and 5 had never
	// reached state.json), 5 and 4 are uncommitted.
	older := head
	older.Serial = 3
	marked, err := reader.History(context.Background(), stack, env, older, 0)
	if err != nil {
		t.Fatal(err)
	}
	var uncommitted []int64
	for _, sn := range marked {
		if sn.Uncommitted {
			uncommitted = append(uncommitted, sn.Serial)
		}
	}
	if diff := cmp.Diff([]int64{5, 4}, uncommitted); diff != "" {
		t.Errorf("uncommitted against serial 3 (-want +got):\n%s", diff)
	}
	for _, sn := range all {
		got, err := reader.ReadSnapshot(context.Background(), stack, env, sn)
		if err != nil {
			t.Fatalf("ReadSnapshot(%s): %v", sn.Name, err)
		}
		if diff := cmp.Diff(saved[sn.Serial], got); diff != "" {
			t.Fatalf("ReadSnapshot(%s) differs from the state saved at serial %d (-saved +snapshot):\n%s", sn.Name, sn.Serial, diff)
		}
	}
	for serial, want := range saved {
		got, err := reader.Snapshot(context.Background(), stack, env, serial)
		if err != nil {
			t.Fatalf("Snapshot(%d): %v", serial, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Snapshot(%d) differs from the state saved at that serial (-saved +snapshot):\n%s", serial, diff)
		}
	}
}

// testHistoryBySerial saves with a clock that goes back at every write (as
// writers on machines whose clocks disagree could): History still lists by
// serial, and each serial reads its own snapshot.
func testHistoryBySerial(t *testing.T, open func(*testing.T) statestore.Backend) {
	epoch := time.Date(2024, 1, 15, 14, 20, 0, 0, time.UTC)
	var writes int
	clock := func() time.Time { writes++; return epoch.Add(-time.Duration(writes) * time.Minute) }
	s := statestore.New(open(t), statestore.WithClock(clock))
	stack := UniqueStack(t)
	var head statestore.Head
	st := SeedState(stack, env)
	for serial := int64(1); serial <= 3; serial++ {
		st.Serial = serial
		st.Outputs["serial"] = serial
		head = mustSave(t, s, st, head)
	}
	snaps, err := s.History(context.Background(), stack, env, head, 0)
	if err != nil {
		t.Fatal(err)
	}
	var serials []int64
	for _, sn := range snaps {
		serials = append(serials, sn.Serial)
	}
	if diff := cmp.Diff([]int64{3, 2, 1}, serials); diff != "" {
		t.Fatalf("History with a clock going back (-want +got):\n%s", diff)
	}
	for serial := int64(1); serial <= 3; serial++ {
		got, err := s.Snapshot(context.Background(), stack, env, serial)
		if err != nil || got.Serial != serial || fmt.Sprint(got.Outputs["serial"]) != fmt.Sprint(serial) {
			t.Fatalf("Snapshot(%d): serial %v outputs %v, %v", serial, got.Serial, got.Outputs, err)
		}
	}
}

func testNotFound(t *testing.T, open func(*testing.T) statestore.Backend) {
	s := statestore.New(open(t))
	ctx := context.Background()
	missing := UniqueStack(t)
	if _, _, err := s.Load(ctx, missing, env); !errors.Is(err, statestore.ErrNotFound) {
		t.Fatalf("Load of a missing state: %v, want ErrNotFound", err)
	}
	if _, err := s.Snapshot(ctx, missing, env, 1); !errors.Is(err, statestore.ErrNotFound) {
		t.Fatalf("Snapshot of a missing state: %v, want ErrNotFound", err)
	}
	if snaps, err := s.History(ctx, missing, env, statestore.Head{}, 0); err != nil || snaps == nil || len(snaps) != 0 {
		t.Fatalf("History of a missing state: %#v, %v; want an empty list, nil", snaps, err)
	}
	stack := UniqueStack(t)
	mustSave(t, s, SeedState(stack, env), statestore.Head{})
	if _, err := s.Snapshot(ctx, stack, env, 2); !errors.Is(err, statestore.ErrNotFound) {
		t.Fatalf("Snapshot of a serial never written: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Load(ctx, stack, "staging"); !errors.Is(err, statestore.ErrNotFound) {
		t.Fatalf("Load of another environment: %v, want ErrNotFound", err)
	}
}

// testTampered writes a document whose resources were edited after Encode,
// through the backend with a correct Prev (as a hand edit or a bit flip
// would): Load and Snapshot must refuse it naming both digests, and no Save
// through the Store can replace it without a head from a successful Load.
func testTampered(t *testing.T, open func(*testing.T) statestore.Backend) {
	b := open(t)
	s := statestore.New(b)
	ctx := context.Background()
	stack := UniqueStack(t)
	st := SeedState(stack, env)
	head := mustSave(t, s, st, statestore.Head{})

	st.Serial = 2
	doc, err := statestore.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(doc, []byte(`"db.r6g.xlarge"`), []byte(`"db.r6g.2xlarge"`), 1)
	if bytes.Equal(bad, doc) {
		t.Fatal("fixture: nothing to tamper with")
	}
	if _, err := b.Write(ctx, statestore.WriteRequest{Stack: stack, Env: env, Serial: 2, Lineage: st.Lineage,
		Time: time.Now().UTC(), Document: bad, Prev: head.Version}); err != nil {
		t.Fatalf("backend Write of the tampered document: %v", err)
	}

	_, _, err = s.Load(ctx, stack, env)
	var ce *statestore.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("Load of a tampered state: %v (%T), want *statestore.ChecksumError", err, err)
	}
	if ce.Location != b.Location(stack, env) || ce.Field != "resources" || ce.Stored != st.Checksums.Resources ||
		!strings.HasPrefix(ce.Computed, "sha256:") || ce.Computed == ce.Stored {
		t.Fatalf("ChecksumError %+v: want location %s, field resources, stored %s and a different computed digest",
			ce, b.Location(stack, env), st.Checksums.Resources)
	}
	if ce.Stack != stack || ce.Env != env {
		t.Fatalf("ChecksumError names %s/%s, want %s/%s (the restore the CLI suggests names them)", ce.Stack, ce.Env, stack, env)
	}
	for _, part := range []string{ce.Location, ce.Stored, ce.Computed} {
		if !strings.Contains(err.Error(), part) {
			t.Fatalf("error %q does not name %s", err, part)
		}
	}
	if _, err := s.Snapshot(ctx, stack, env, 2); !errors.As(err, &ce) {
		t.Fatalf("Snapshot of the tampered serial: %v, want *statestore.ChecksumError", err)
	}

	// Heads a writer could hold without a successful Load: the one before the
	// tampering, and none.
	next := SeedState(stack, env)
	next.Lineage, next.Serial = st.Lineage, 3
	_, err = s.Save(ctx, next, head, nil)
	wantConflict(t, err, "Save on the head before the tampered write")
	_, err = s.Save(ctx, next, statestore.Head{}, nil)
	wantConflict(t, err, "Save on the zero head over a tampered state")
	raw, _, err := b.Read(ctx, stack, env)
	if err != nil || !bytes.Equal(raw, bad) {
		t.Fatalf("the tampered document was overwritten (err %v)", err)
	}
}

func testCancelled(t *testing.T, open func(*testing.T) statestore.Backend) {
	s := statestore.New(open(t))
	stack := UniqueStack(t)
	head := mustSave(t, s, SeedState(stack, env), statestore.Head{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, _ := mustLoad(t, s, stack)
	st.Serial = 2
	if _, err := s.Save(ctx, st, head, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save with a cancelled context: %v, want context.Canceled", err)
	}
	if _, h := mustLoad(t, s, stack); h != head {
		t.Fatalf("a cancelled Save changed the state: head %+v, want %+v", h, head)
	}
}

func testLarge(t *testing.T, open func(*testing.T) statestore.Backend) {
	if testing.Short() {
		t.Skip("10,000-resource state: skipped with -short")
	}
	s := statestore.New(open(t))
	stack := UniqueStack(t)
	st := LargeState(stack, env, 10_000)
	head := mustSave(t, s, st, statestore.Head{})
	got, gotHead := mustLoad(t, statestore.New(open(t)), stack)
	if gotHead != head || len(got.Resources) != 10_000 || got.Checksums != st.Checksums {
		t.Fatalf("10,000-resource round trip: head %+v (want %+v), %d resources, checksums %+v (want %+v)",
			gotHead, head, len(got.Resources), got.Checksums, st.Checksums)
	}
	// Equal checksums mean equal canonical JSON; compare a few entries field by field too.
	for _, addr := range []string{"service-0000/component-0", "service-1234/component-2", "service-2499/component-3"} {
		if diff := cmp.Diff(st.Resources[addr], got.Resources[addr]); diff != "" {
			t.Fatalf("resource %s (-saved +loaded):\n%s", addr, diff)
		}
	}
}

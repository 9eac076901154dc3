package statestore_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

// snap is the snapshot of serial written sec seconds after a fixed epoch.
func snap(serial int64, sec int) statestore.SnapshotInfo {
	at := time.Date(2024, 1, 15, 14, 20, sec, 0, time.UTC)
	return statestore.SnapshotInfo{Serial: serial, Time: at, Name: statestore.SnapshotName(at, serial)}
}

func uncommitted(sn statestore.SnapshotInfo) statestore.SnapshotInfo {
	sn.Uncommitted = true
	return sn
}

// As a backend lists them, in any order: serial 3, whose state.json write
// never completed; serial 2 written twice (the earlier attempt crashed
// before state.json); serial 1, written by a machine whose clock was ahead.
var listed = []statestore.SnapshotInfo{snap(2, 10), snap(1, 30), snap(3, 40), snap(2, 20)}

func TestHistoryOrdersMarksAndLimits(t *testing.T) {
	head := statestore.Head{Version: "v1", Serial: 2, Lineage: "L"}
	cases := []struct {
		name  string
		head  statestore.Head
		limit int
		want  []statestore.SnapshotInfo
	}{
		{"all", head, 0, []statestore.SnapshotInfo{uncommitted(snap(3, 40)), snap(2, 20), uncommitted(snap(2, 10)), snap(1, 30)}},
		{"limit 2", head, 2, []statestore.SnapshotInfo{uncommitted(snap(3, 40)), snap(2, 20)}},
		{"limit above the count", head, 9, []statestore.SnapshotInfo{uncommitted(snap(3, 40)), snap(2, 20), uncommitted(snap(2, 10)), snap(1, 30)}},
		{"no state.json: none became it", statestore.Head{}, 0, []statestore.SnapshotInfo{
			uncommitted(snap(3, 40)), uncommitted(snap(2, 20)), uncommitted(snap(2, 10)), uncommitted(snap(1, 30))}},
		{"state.json at serial 3", statestore.Head{Version: "v2", Serial: 3, Lineage: "L"}, 0, []statestore.SnapshotInfo{
			snap(3, 40), snap(2, 20), uncommitted(snap(2, 10)), snap(1, 30)}},
	}
	for _, c := range cases {
		rec := &recorder{snaps: slices.Clone(listed)}
		got, err := statestore.New(rec).History(context.Background(), "shop", "prod", c.head, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
		if !slices.Equal(rec.snaps, listed) {
			t.Errorf("%s: History changed the backend's list: %+v", c.name, rec.snaps)
		}
	}
	got, err := statestore.New(&recorder{}).History(context.Background(), "shop", "prod", statestore.Head{}, 0)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("History of nothing = %#v, %v; want an empty list", got, err)
	}
}

func encodeSerial(t *testing.T, serial int64, note string) (*statestore.State, []byte) {
	t.Helper()
	st := storetest.SeedState("shop", "prod")
	st.Serial = serial
	st.Outputs["note"] = note
	doc, err := statestore.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	return st, doc
}

func TestSnapshotIsTheLatestOfItsSerial(t *testing.T) {
	_, crashed := encodeSerial(t, 2, "the attempt that crashed")
	_, committed := encodeSerial(t, 2, "the write that became state.json")
	rec := &recorder{snaps: listed, docs: map[string][]byte{snap(2, 10).Name: crashed, snap(2, 20).Name: committed}}
	s := statestore.New(rec)
	got, err := s.Snapshot(context.Background(), "shop", "prod", 2)
	if err != nil || got.Outputs["note"] != "the write that became state.json" {
		t.Fatalf("Snapshot(2) = %v, %v; want the later snapshot of serial 2", got, err)
	}
	got, err = s.ReadSnapshot(context.Background(), "shop", "prod", snap(2, 10))
	if err != nil || got.Outputs["note"] != "the attempt that crashed" {
		t.Fatalf("ReadSnapshot(%s) = %v, %v; want that very snapshot", snap(2, 10).Name, got, err)
	}
	if _, err := s.Snapshot(context.Background(), "shop", "prod", 4); !errors.Is(err, statestore.ErrNotFound) {
		t.Fatalf("Snapshot(4), never written: %v, want ErrNotFound", err)
	}
}

func TestCurrentHead(t *testing.T) {
	st, doc := encodeSerial(t, 2, "")
	tampered := bytes.Replace(doc, []byte(`"db.r6g.xlarge"`), []byte(`"db.r6g.2xlarge"`), 1)
	if bytes.Equal(tampered, doc) {
		t.Fatal("fixture: nothing to tamper with")
	}
	cut := bytes.Index(doc, []byte(`"lineage"`))
	cases := []struct {
		name string
		doc  []byte
		want statestore.Head
	}{
		{"no state.json", nil, statestore.Head{}},
		{"verified", doc, statestore.Head{Version: "v1", Serial: 2, Lineage: st.Lineage}},
		{"tampered: what it records", tampered, statestore.Head{Version: "v1", Serial: 2, Lineage: st.Lineage}},
		{"cut before its lineage", doc[:cut], statestore.Head{Version: "v1", Serial: 2}},
		{"cut before its serial: the highest serial of the history", doc[:20], statestore.Head{Version: "v1", Serial: 3}},
		{"not JSON: the highest serial of the history", []byte("\x00garbage"), statestore.Head{Version: "v1", Serial: 3}},
	}
	for _, c := range cases {
		got, err := statestore.New(&recorder{doc: c.doc, snaps: listed}).CurrentHead(context.Background(), "shop", "prod")
		if err != nil || got != c.want {
			t.Errorf("%s: CurrentHead = %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

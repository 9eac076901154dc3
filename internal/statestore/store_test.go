package statestore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

// recorder is a Backend that records writes and holds one document; it
// lists snaps, each of which reads as the document in docs by name, else as
// doc.
type recorder struct {
	writes []statestore.WriteRequest
	doc    []byte
	err    error
	snaps  []statestore.SnapshotInfo
	docs   map[string][]byte
}

func (r *recorder) Read(context.Context, string, string) ([]byte, statestore.Version, error) {
	if r.doc == nil {
		return nil, "", statestore.ErrNotFound
	}
	return r.doc, "v1", nil
}
func (r *recorder) Write(_ context.Context, req statestore.WriteRequest) (statestore.Version, error) {
	r.writes = append(r.writes, req)
	return "v-new", r.err
}
func (r *recorder) ListSnapshots(context.Context, string, string) ([]statestore.SnapshotInfo, error) {
	return r.snaps, nil
}
func (r *recorder) ReadSnapshot(_ context.Context, _, _ string, sn statestore.SnapshotInfo) ([]byte, error) {
	if d, ok := r.docs[sn.Name]; ok {
		return d, nil
	}
	return r.doc, nil
}
func (r *recorder) Location(stack, env string) string { return "mem://" + stack + "/" + env }
func (r *recorder) Close() error                      { return nil }

func TestSaveSendsOneWrite(t *testing.T) {
	rec := &recorder{}
	at := time.Date(2024, 1, 15, 14, 20, 0, 0, time.FixedZone("X", 7200))
	s := statestore.New(rec, statestore.WithClock(func() time.Time { return at }))
	st := storetest.SeedState("shop", "prod")
	st.Serial = 4
	lock := &statestore.LockRef{Key: "stack:shop:env:prod", LockID: "id", Fence: 9}
	base := statestore.Head{Version: "v1", Serial: 3, Lineage: st.Lineage}
	head, err := s.Save(context.Background(), st, base, lock)
	if err != nil {
		t.Fatal(err)
	}
	if head != (statestore.Head{Version: "v-new", Serial: 4, Lineage: st.Lineage}) {
		t.Fatalf("head %+v", head)
	}
	if len(rec.writes) != 1 {
		t.Fatalf("%d writes, want 1", len(rec.writes))
	}
	w := rec.writes[0]
	if w.Stack != "shop" || w.Env != "prod" || w.Serial != 4 || w.Lineage != st.Lineage || w.Prev != "v1" ||
		!w.Time.Equal(at) || w.Time.Location() != time.UTC || w.Lock != lock || w.DeploymentID != st.Metadata.DeploymentID {
		t.Fatalf("write request %+v", w)
	}
	if _, err := statestore.Decode(w.Document, "x"); err != nil {
		t.Fatalf("the written document does not verify: %v", err)
	}
}

func TestSaveRulesAreCheckedBeforeWriting(t *testing.T) {
	st := storetest.SeedState("shop", "prod")
	cases := []struct {
		name     string
		edit     func(*statestore.State)
		base     statestore.Head
		conflict bool
	}{
		{"same serial", func(*statestore.State) {}, statestore.Head{Version: "v1", Serial: 1, Lineage: st.Lineage}, true},
		{"lower serial", func(*statestore.State) {}, statestore.Head{Version: "v1", Serial: 7, Lineage: st.Lineage}, true},
		{"other lineage", func(s *statestore.State) { s.Serial = 2 }, statestore.Head{Version: "v1", Serial: 1, Lineage: "other"}, true},
		{"no lineage", func(s *statestore.State) { s.Lineage = "" }, statestore.Head{}, false},
		{"no stack", func(s *statestore.State) { s.Metadata.Stack = "" }, statestore.Head{}, false},
	}
	for _, c := range cases {
		rec := &recorder{}
		cp := *st
		c.edit(&cp)
		_, err := statestore.New(rec).Save(context.Background(), &cp, c.base, nil)
		var ce *statestore.ConflictError
		if err == nil || errors.As(err, &ce) != c.conflict || len(rec.writes) != 0 {
			t.Errorf("%s: err %v, %d writes; want an error (conflict %v) and no write", c.name, err, len(rec.writes), c.conflict)
		}
		if c.conflict && !strings.Contains(err.Error(), "mem://shop/prod") {
			t.Errorf("%s: %q does not name the location", c.name, err)
		}
	}
}

func TestLoadRefusesAnotherStacksDocument(t *testing.T) {
	doc, err := statestore.Encode(storetest.SeedState("other", "prod"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = statestore.New(&recorder{doc: doc}).Load(context.Background(), "shop", "prod")
	var ce *statestore.ChecksumError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "other/prod") || ce.Stack != "shop" || ce.Env != "prod" {
		t.Fatalf("Load of another stack's document: %v, want *ChecksumError naming it", err)
	}
	three := []statestore.SnapshotInfo{{Serial: 3, Name: "2024-01-15T14-20-00.000Z-3.json"}}
	if _, err := statestore.New(&recorder{doc: doc, snaps: three}).Snapshot(context.Background(), "other", "prod", 3); !errors.As(err, &ce) {
		t.Fatalf("Snapshot(3) returning serial 1: %v, want *ChecksumError", err)
	}
}

func TestNewState(t *testing.T) {
	a, b := statestore.NewState("s", "e"), statestore.NewState("s", "e")
	if a.Lineage == "" || a.Lineage == b.Lineage || a.Serial != 0 || a.FormatVersion != statestore.FormatVersion ||
		a.Version != statestore.DocVersion || a.Resources == nil || a.Outputs == nil || a.Metadata.Stack != "s" || a.Metadata.Environment != "e" {
		t.Fatalf("NewState = %+v", a)
	}
}

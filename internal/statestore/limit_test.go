package statestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/inputfile"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

func TestStoreRefusesDocumentsOverItsLimit(t *testing.T) {
	ctx := context.Background()
	doc, err := statestore.Encode(storetest.SeedState("shop", "prod"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{doc: doc, snaps: []statestore.SnapshotInfo{{Serial: 1, Name: "2024-01-15T14-20-00.000Z-1.json"}}}
	limit := int64(len(doc) - 1)
	s := statestore.New(rec, statestore.WithMaxDocumentBytes(limit))
	if s.MaxDocumentBytes() != limit {
		t.Fatalf("MaxDocumentBytes = %d", s.MaxDocumentBytes())
	}
	var tl *statestore.TooLargeError
	if _, _, err := s.Load(ctx, "shop", "prod"); !errors.As(err, &tl) || tl.Size != int64(len(doc)) || tl.Limit != limit ||
		!strings.Contains(err.Error(), "raise backend.max_state_size") {
		t.Fatalf("Load: %v", err)
	}
	if _, err := s.Snapshot(ctx, "shop", "prod", 1); !errors.As(err, &tl) {
		t.Fatalf("Snapshot: %v", err)
	}
	st := storetest.SeedState("shop", "prod")
	st.Serial = 1
	if _, err := s.Save(ctx, st, statestore.Head{}, nil); !errors.As(err, &tl) || len(rec.writes) != 0 {
		t.Fatalf("Save: %v (%d writes)", err, len(rec.writes))
	}
	// At the limit it loads; the default is well above the 10,000-resource state.
	if _, _, err := statestore.New(rec, statestore.WithMaxDocumentBytes(int64(len(doc)))).Load(ctx, "shop", "prod"); err != nil {
		t.Fatal(err)
	}
	if statestore.New(rec).MaxDocumentBytes() != statestore.DefaultMaxDocumentBytes || statestore.DefaultMaxDocumentBytes < 3*17_000_000 {
		t.Fatal("default limit")
	}
}

func TestReadFileChecksBeforeReading(t *testing.T) {
	doc, err := statestore.Encode(storetest.SeedState("shop", "prod"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "deployer-errored-shop-prod.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := statestore.ReadFile(path, 0); err != nil || st.Metadata.Stack != "shop" {
		t.Fatalf("ReadFile: %v", err)
	}
	var tl *inputfile.TooLargeError
	if _, err := statestore.ReadFile(path, int64(len(doc)-1)); !errors.As(err, &tl) {
		t.Fatalf("oversize: %v", err)
	}
	var nr *inputfile.NotRegularError
	if _, err := statestore.ReadFile("/dev/zero", 0); !errors.As(err, &nr) {
		t.Fatalf("/dev/zero: %v", err)
	}
}

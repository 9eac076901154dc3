package lockmgr_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/file"
)

// A lock exec of a 100 KiB command line keeps its first 4 KiB in the record,
// which every backend can read back (docs/locking.md, "Record size").
func TestLongCommandIsCutSoTheRecordStaysReadable(t *testing.T) {
	b, err := file.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := lockmgr.NewManager(b, lockmgr.Options{})
	cmd := strings.Repeat("é", 50<<10) // two bytes each
	l, err := m.Acquire(context.Background(), lockmgr.Request{Key: lockmgr.CustomKey("sync"), Metadata: lockmgr.Metadata{Command: cmd}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	st, err := m.Get(context.Background(), lockmgr.CustomKey("sync"))
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	got := st.Metadata.Command
	if len(got) > lockmgr.MaxCommandBytes || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) || !strings.HasPrefix(cmd, strings.TrimSuffix(got, "…")) {
		t.Errorf("command kept: %d bytes, valid UTF-8 %v, ends %q", len(got), utf8.ValidString(got), got[max(len(got)-8, 0):])
	}
}

// A record over the limit is refused before it is written: no backend could
// read it back.
func TestOversizedRecordIsNotWritten(t *testing.T) {
	b, err := file.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := lockmgr.NewManager(b, lockmgr.Options{})
	_, err = m.Acquire(context.Background(), lockmgr.Request{Key: lockmgr.CustomKey("sync"), LockedBy: strings.Repeat("x", 70<<10)})
	if err == nil || !strings.Contains(err.Error(), "over the limit of 64 KiB for a lock record") {
		t.Fatalf("want the limit named, got %v", err)
	}
	if recs, err := b.List(context.Background(), ""); err != nil || len(recs) != 0 {
		t.Fatalf("records written: %v, %v", recs, err)
	}
}

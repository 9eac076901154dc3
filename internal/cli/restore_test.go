package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// A snapshot above state.json's serial is what an apply produced when the
// state.json write never completed; restoring it is allowed (it is how that
// work is recovered) but the confirmation says what it is.
func TestRestoreConfirmationNamesAnUncommittedSnapshot(t *testing.T) {
	cfg := shopProject(t)
	dir := filepath.Dir(cfg)
	if _, stderr, err := runRoot(t, "", false, "--config", cfg, "deploy", "-e", "dev", "--yes"); err != nil {
		t.Fatalf("deploy: %v\n%s", err, stderr)
	}
	hist := filepath.Join(dir, ".deployer", "stacks", "shop", "dev", "history")
	snaps, _ := filepath.Glob(filepath.Join(hist, "*-1.json"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots of serial 1: %v", snaps)
	}
	// What a crash between the two writes of serial 2 leaves: a snapshot
	// holding serial 2 and no state.json of serial 2.
	fb, err := filestate.New(filepath.Join(dir, ".deployer"))
	if err != nil {
		t.Fatal(err)
	}
	store := statestore.New(fb)
	st, _, err := store.Load(t.Context(), "shop", "dev")
	if err != nil {
		t.Fatal(err)
	}
	st.Serial = 2
	doc, err := statestore.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hist, statestore.SnapshotName(time.Now(), 2)), doc, 0o644); err != nil {
		t.Fatal(err)
	}

	_, stderr, err := runRoot(t, "no\n", true, "--config", cfg, "restore", "-e", "dev", "--serial", "2")
	if err == nil {
		t.Fatalf("answering no must not restore:\n%s", stderr)
	}
	if !strings.Contains(stderr, "Serial 2 never became state.json") {
		t.Errorf("the confirmation does not say serial 2 is uncommitted:\n%s", stderr)
	}
	if st, _, err := store.Load(t.Context(), "shop", "dev"); err != nil || st.Serial != 1 {
		t.Errorf("declining must leave serial 1: %v %v", st, err)
	}
	_, stderr, _ = runRoot(t, "no\n", true, "--config", cfg, "restore", "-e", "dev", "--serial", "1")
	if strings.Contains(stderr, "never became state.json") {
		t.Errorf("serial 1 is committed, yet the confirmation says otherwise:\n%s", stderr)
	}
}

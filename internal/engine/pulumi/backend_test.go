package pulumi

import (
	"os"
	"path/filepath"
	"testing"
)

// A SIGKILL while Pulumi's file backend rewrites a checkpoint's sidecar
// leaves it empty; the repair removes exactly the torn sidecars.
func TestRepairLocalBackendRemovesOnlyTornSidecars(t *testing.T) {
	dir := t.TempDir()
	stacks := filepath.Join(dir, ".pulumi", "stacks", "many")
	if err := os.MkdirAll(stacks, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"e1.json":       `{"version":3}`,
		"e1.json.attrs": `{"user.cache_control":"","user.content_type":"application/json"}`,
		"e2.json":       `{"version":3}`,
		"e2.json.attrs": ``,
		"e3.json.attrs": `{"user.content_type":`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(stacks, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := repairLocalBackend("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Errorf("removed %v, want the two torn sidecars", removed)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(stacks, name))
		gone := os.IsNotExist(err)
		if want := name == "e2.json.attrs" || name == "e3.json.attrs"; gone != want {
			t.Errorf("%s: removed=%v, want %v", name, gone, want)
		}
	}
	if removed, err := repairLocalBackend("s3://bucket/prefix"); err != nil || removed != nil {
		t.Errorf("an s3:// backend is left alone: %v %v", removed, err)
	}
	if removed, err := repairLocalBackend("file://" + filepath.Join(dir, "missing")); err != nil || removed != nil {
		t.Errorf("a missing backend directory is nothing to repair: %v %v", removed, err)
	}
}

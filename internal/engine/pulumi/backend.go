package pulumi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// ensureLocalBackend creates the directory of a file:// Pulumi backend (the
// DIY backend refuses a missing one).
func ensureLocalBackend(backend string) error {
	if !strings.HasPrefix(backend, "file://") {
		return nil
	}
	u, err := url.Parse(backend)
	if err != nil {
		return fmt.Errorf("parse Pulumi backend %s: %w", backend, err)
	}
	if err := os.MkdirAll(u.Path, 0o755); err != nil {
		return fmt.Errorf("create Pulumi backend directory: %w", err)
	}
	return nil
}

// localStackExists reports whether the file:// Pulumi backend holds stack
// env of project: its checkpoint .pulumi/stacks/{project}/{env}.json (or
// .json.gz) exists. False for other backends: then the CLI is asked.
func localStackExists(backend, project, env string) bool {
	if !strings.HasPrefix(backend, "file://") {
		return false
	}
	u, err := url.Parse(backend)
	if err != nil {
		return false
	}
	base := filepath.Join(u.Path, ".pulumi", "stacks", project, env+".json")
	for _, p := range []string{base, base + ".gz"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// configString renders a stack config value as Pulumi stores it: strings as
// they are, anything else as JSON.
func configString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// maxAttrsSize bounds the sidecar files repairLocalBackend reads (bytes);
// the ones Pulumi's file backend writes hold a content type and a few
// metadata keys.
const maxAttrsSize = 64 << 10

// repairLocalBackend removes the torn attribute sidecars (`*.attrs`) of a
// file:// Pulumi backend after its process was killed. The blob library
// under Pulumi's file backend renames the checkpoint into place atomically
// but truncates and rewrites the sidecar in place, so a SIGKILL at that
// moment leaves an empty one and every later Pulumi command fails with
// "failed to load checkpoint: EOF". A missing sidecar reads as no
// attributes, so removing a torn one loses nothing
// (docs/pulumi.md#cancellation). It returns the paths removed; other
// backends are left alone.
func repairLocalBackend(backend string) ([]string, error) {
	if !strings.HasPrefix(backend, "file://") {
		return nil, nil
	}
	u, err := url.Parse(backend)
	if err != nil {
		return nil, fmt.Errorf("parse Pulumi backend %s: %w", backend, err)
	}
	var removed []string
	err = filepath.WalkDir(u.Path, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".attrs") || !d.Type().IsRegular() {
			return err
		}
		if torn, err := tornAttrs(path); err != nil || !torn {
			return err
		}
		if err := os.Remove(path); err != nil {
			return err
		}
		removed = append(removed, path)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return removed, err
}

// tornAttrs reports whether the sidecar at path is not one JSON object.
func tornAttrs(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	b, over, err := inputfile.ReadAtMost(f, maxAttrsSize)
	if err != nil || over {
		return false, err
	}
	var v map[string]any
	return json.Unmarshal(b, &v) != nil, nil
}

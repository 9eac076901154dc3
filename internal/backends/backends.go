// Package backends opens the lock and state backends named by the URLs of
// deployer.yaml's backend section (docs/backends.md). It is the one place that knows
// every backend package.
package backends

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// Options carry settings beyond the URLs.
type Options struct {
	// BaseDir resolves relative file:// paths: the directory of deployer.yaml.
	BaseDir   string
	SSE       string // s3 state: "", AES256, aws:kms
	KMSKeyID  string
	PathStyle bool
	// LockURL is backend.lock: a postgres:// state backend checks the
	// writer's lock row in the same transaction when it equals the state URL.
	LockURL string
}

// FileDir returns the directory of a file:// URL: "file://.deployer" is
// relative to base, "file:///abs" absolute.
func FileDir(raw, base string) (string, error) {
	rest, ok := strings.CutPrefix(raw, "file://")
	if !ok || rest == "" {
		return "", fmt.Errorf("backend %q: want file://DIR (relative to deployer.yaml) or file:///ABSOLUTE/DIR", raw)
	}
	if u, err := url.PathUnescape(rest); err == nil {
		rest = u
	}
	if !filepath.IsAbs(rest) {
		rest = filepath.Join(base, rest)
	}
	return filepath.Clean(rest), nil
}

func scheme(raw string) string {
	if raw == "none" {
		return "none"
	}
	s, _, _ := strings.Cut(raw, "://")
	return s
}

// OpenLock opens the lock backend of raw.
func OpenLock(ctx context.Context, raw string, o Options) (lockmgr.Backend, error) {
	switch scheme(raw) {
	case "file":
		dir, err := FileDir(raw, o.BaseDir)
		if err != nil {
			return nil, err
		}
		return filelock.New(dir)
	}
	return openLockExt(ctx, raw, o)
}

// OpenState opens the state backend of raw.
func OpenState(ctx context.Context, raw string, o Options) (statestore.Backend, error) {
	switch scheme(raw) {
	case "file":
		dir, err := FileDir(raw, o.BaseDir)
		if err != nil {
			return nil, err
		}
		return filestate.New(dir)
	}
	return openStateExt(ctx, raw, o)
}

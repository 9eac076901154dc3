package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/gofrs/flock"

	"github.com/deployer-dev/deployer/internal/statestore"
)

var _ statestore.Backend = (*Backend)(nil)

// flockRetry is how often a write polls the OS file lock held by another
// writer (another goroutine, Backend or process).
const flockRetry = 2 * time.Millisecond

// validName is the stack and environment name rule of docs/configuration.md#names; checked again
// here so no name can leave DIR.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Backend stores state documents as files under DIR (see the package
// documentation). It is safe for concurrent use, and any number of Backends
// in any number of processes may share one DIR.
type Backend struct {
	dir string
}

// New returns the backend of DIR. Reads never create DIR; the first write
// does (mode 0o700), so read-only commands leave a directory as they found it
// (docs/design.md#read-only-commands). Errors: DIR is empty, or exists and is
// not a directory.
func New(dir string) (*Backend, error) {
	if dir == "" {
		return nil, errors.New("file state backend: empty directory: use file://DIR")
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("state directory %s is not a directory (check backend.state in deployer.yaml)", dir)
	}
	return &Backend{dir: filepath.Clean(dir)}, nil
}

// Dir returns DIR.
func (b *Backend) Dir() string { return b.dir }

func (b *Backend) envDir(stack, env string) (string, error) {
	for _, n := range []string{stack, env} {
		if !validName.MatchString(n) {
			return "", fmt.Errorf("invalid stack or environment name %q: want lower-case letters, digits and '-' (at most 63, starting with a letter or digit)", n)
		}
	}
	return filepath.Join(b.dir, "stacks", stack, env), nil
}

// Location returns the path of state.json of stack/env.
func (b *Backend) Location(stack, env string) string {
	return filepath.Join(b.dir, "stacks", stack, env, "state.json")
}

func version(data []byte) statestore.Version {
	sum := sha256.Sum256(data)
	return statestore.Version("sha256:" + hex.EncodeToString(sum[:]))
}

// Read returns state.json of stack/env and its Version ("sha256:<hex>" of the
// bytes); statestore.ErrNotFound (wrapped) when there is none.
func (b *Backend) Read(ctx context.Context, stack, env string) ([]byte, statestore.Version, error) {
	dir, err := b.envDir(stack, env)
	if err != nil {
		return nil, "", err
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, "state.json")
	data, err := readLimited(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("no state at %s: %w", path, statestore.ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read state: %w", err)
	}
	return data, version(data), nil
}

// ReadVersion returns the Version of state.json of stack/env as Read would,
// hashing the file as it streams by without keeping, decoding or verifying
// it (statestore.VersionReader); statestore.ErrNotFound (wrapped) when
// there is none.
func (b *Backend) ReadVersion(ctx context.Context, stack, env string) (statestore.Version, error) {
	dir, err := b.envDir(stack, env)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "state.json")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no state at %s: %w", path, statestore.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read state: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read state: %w", err)
	}
	return statestore.Version("sha256:" + hex.EncodeToString(h.Sum(nil))), nil
}

var _ statestore.VersionReader = (*Backend)(nil)

// Write stores the snapshot of req, then state.json, under the OS file lock
// of stack/env, iff the Version of state.json equals req.Prev (a missing file
// is ""). A stale req.Prev gives *statestore.ConflictError and writes
// nothing. req.Lock is not checked: this backend relies on the
// compare-and-swap. It returns the Version of the new state.json.
func (b *Backend) Write(ctx context.Context, req statestore.WriteRequest) (statestore.Version, error) {
	dir, err := b.envDir(req.Stack, req.Env)
	if err != nil {
		return "", err
	}
	if len(req.Document) == 0 {
		return "", errors.New("write state: empty document")
	}
	if err := os.MkdirAll(filepath.Join(dir, "history"), 0o700); err != nil {
		return "", fmt.Errorf("create state directory: %w (check that %s is writable)", err, b.dir)
	}
	// The state holds (encrypted) secrets: its directory is the user's own
	// even when another writer (Pulumi's backend) created it first.
	_ = os.Chmod(dir, 0o700)
	fl := flock.New(filepath.Join(dir, ".state.flock"), flock.SetPermissions(0o600))
	defer fl.Close()
	locked, err := fl.TryLockContext(ctx, flockRetry)
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", fl.Path(), err)
	}
	if !locked {
		return "", fmt.Errorf("lock %s: %w", fl.Path(), context.Cause(ctx))
	}
	defer fl.Unlock()

	path := filepath.Join(dir, "state.json")
	if err := checkPrev(ctx, path, req.Prev); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("write state %s: %w", path, err)
	}
	if err := writeSnapshot(filepath.Join(dir, "history"), req); err != nil {
		return "", err
	}
	if err := replaceFile(path, req.Document); err != nil {
		return "", err
	}
	return version(req.Document), nil
}

// checkPrev compares the Version of the file at path with prev.
func checkPrev(ctx context.Context, path string, prev statestore.Version) error {
	cur, err := readLimited(ctx, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if prev == "" {
			return nil
		}
		return &statestore.ConflictError{Location: path, Reason: "the state was deleted since it was read"}
	case err != nil:
		return fmt.Errorf("read state: %w", err)
	case prev == "":
		return &statestore.ConflictError{Location: path, Reason: "a state was created by someone else since this one was started"}
	case version(cur) != prev:
		return &statestore.ConflictError{Location: path, Reason: fmt.Sprintf(
			"the state was written by someone else since it was read (read %s, now %s)", prev, version(cur))}
	}
	return nil
}

// writeSnapshot creates the history snapshot of req; it never replaces one.
func writeSnapshot(histDir string, req statestore.WriteRequest) error {
	path := filepath.Join(histDir, statestore.SnapshotName(req.Time, req.Serial))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return &statestore.ConflictError{Location: path, Reason: "a history snapshot of this serial and time already exists"}
	}
	if err != nil {
		return fmt.Errorf("write history snapshot: %w", err)
	}
	_, err = f.Write(req.Document)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write history snapshot %s: %w", path, err)
	}
	return syncDir(histDir)
}

// replaceFile atomically replaces path with data: temporary file, fsync,
// rename, fsync of the directory.
func replaceFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".state.json.tmp-*")
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write state %s: %w", path, err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// ListSnapshots lists the snapshots of stack/env in directory order, every
// one (statestore.Store orders and marks them). Files that are not
// snapshots are ignored. No state gives an empty list.
func (b *Backend) ListSnapshots(ctx context.Context, stack, env string) ([]statestore.SnapshotInfo, error) {
	dir, err := b.envDir(stack, env)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, "history"))
	if errors.Is(err, fs.ErrNotExist) {
		return []statestore.SnapshotInfo{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list history: %w", err)
	}
	snaps := make([]statestore.SnapshotInfo, 0, len(entries))
	for _, e := range entries {
		if info, err := statestore.ParseSnapshotName(e.Name()); err == nil && e.Type().IsRegular() {
			snaps = append(snaps, info)
		}
	}
	return snaps, nil
}

// ReadSnapshot returns the bytes of the snapshot file sn.Name;
// statestore.ErrNotFound (wrapped) when there is none.
func (b *Backend) ReadSnapshot(ctx context.Context, stack, env string, sn statestore.SnapshotInfo) ([]byte, error) {
	dir, err := b.envDir(stack, env)
	if err != nil {
		return nil, err
	}
	if _, err := statestore.ParseSnapshotName(sn.Name); err != nil {
		return nil, fmt.Errorf("read history snapshot: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "history", sn.Name)
	data, err := readLimited(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no history snapshot %s: %w", path, statestore.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read history snapshot: %w", err)
	}
	return data, nil
}

// readLimited reads the file at path, refusing one over
// statestore.ReadLimit(ctx) (*statestore.TooLargeError) by its size before
// reading, and reading no more than the limit either way.
func readLimited(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err := statestore.CheckReadSize(ctx, path, fi.Size()); err != nil {
		return nil, err
	}
	return statestore.LimitedRead(ctx, f, path)
}

// Close releases nothing: the backend holds no open files between calls.
func (b *Backend) Close() error { return nil }

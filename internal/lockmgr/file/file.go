package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

var _ lockmgr.Backend = (*Backend)(nil)

// flockRetry is how often a blocked caller polls the OS file lock held by
// another process or another Backend on the same directory.
const flockRetry = time.Millisecond

// Backend stores lock records as files under DIR/locks (see the package
// documentation for the layout). It is safe for concurrent use by many
// goroutines, and any number of Backends in any number of processes may share
// one DIR.
type Backend struct {
	dir   string        // DIR/locks
	sem   chan struct{} // one operation of this Backend at a time holds fl
	fl    *flock.Flock
	close chan struct{}
}

// New opens the lock directory DIR/locks. Reads never create it: the first
// write creates it (mode 0o700), so read-only commands leave a directory as
// they found it (docs/design.md#read-only-commands). Errors: DIR/locks or an
// ancestor exists but is not a usable directory.
func New(dir string) (*Backend, error) {
	locks := filepath.Join(dir, "locks")
	if fi, err := os.Stat(locks); err == nil && !fi.IsDir() || err != nil && !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("open lock directory %s: %w (check that %s is a writable directory)", locks, err, dir)
	}
	return &Backend{
		dir:   locks,
		sem:   make(chan struct{}, 1),
		fl:    flock.New(filepath.Join(locks, ".flock"), flock.SetPermissions(0o600)),
		close: make(chan struct{}),
	}, nil
}

// Dir returns DIR/locks, the directory holding the records.
func (b *Backend) Dir() string { return b.dir }

// withLock runs fn holding both this Backend's semaphore and the OS file lock
// of the directory. It gives up when ctx ends or the Backend is closed.
func (b *Backend) withLock(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-b.close:
		return errClosed
	}
	defer func() { <-b.sem }()
	select {
	case <-b.close:
		return errClosed
	default:
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return fmt.Errorf("create lock directory: %w (check that %s is writable)", err, filepath.Dir(b.dir))
	}
	ok, err := b.fl.TryLockContext(ctx, flockRetry)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("lock %s: %w", b.fl.Path(), err)
	}
	if !ok {
		return ctx.Err()
	}
	defer b.fl.Unlock() //nolint:errcheck // closing the descriptor releases the lock anyway
	return fn()
}

var errClosed = errors.New("file lock backend is closed")

// TryAcquire writes rec as the record of rec.LockKey if there is none or the
// existing one has expiresAt < rec.LockedAt. It returns rec with Fence one
// above the largest fence ever handed out for the key. A live holder gives
// *lockmgr.HeldError with the holder's record; a damaged record file, an I/O
// error or ctx's error are returned wrapped.
func (b *Backend) TryAcquire(ctx context.Context, rec lockmgr.Record) (lockmgr.Record, error) {
	if rec.LockKey == "" || rec.LockID == "" {
		return lockmgr.Record{}, fmt.Errorf("acquire lock: record needs lockKey and lockId (got %q, %q)", rec.LockKey, rec.LockID)
	}
	err := b.withLock(ctx, func() error {
		name := encodeKey(rec.LockKey)
		cur, err := b.read(name)
		switch {
		case err == nil && cur.ExpiresAt >= rec.LockedAt:
			return &lockmgr.HeldError{Record: cur}
		case err != nil && !errors.Is(err, lockmgr.ErrNotFound):
			return err
		}
		fence, err := b.readFence(name)
		if err != nil {
			return err
		}
		rec.Fence = max(fence, cur.Fence) + 1
		if err := writeFileAtomic(b.dir, name+fenceExt, []byte(fmt.Sprintf("%d\n", rec.Fence)), false); err != nil {
			return fmt.Errorf("write fence of %s: %w", rec.LockKey, err)
		}
		return b.write(name, rec)
	})
	if err != nil {
		var held *lockmgr.HeldError
		if errors.As(err, &held) {
			return lockmgr.Record{}, err
		}
		return lockmgr.Record{}, fmt.Errorf("acquire lock %s: %w", rec.LockKey, err)
	}
	return rec, nil
}

// Heartbeat sets lastHeartbeat=at and expiresAt (both stored as epoch seconds)
// on the record of key iff its lockId is lockID. Errors: lockmgr.ErrLockLost
// when the record is gone or another lockId holds it, I/O or ctx errors.
func (b *Backend) Heartbeat(ctx context.Context, key, lockID string, at, expiresAt time.Time) error {
	err := b.withLock(ctx, func() error {
		name := encodeKey(key)
		cur, err := b.owned(name, lockID)
		if err != nil {
			return err
		}
		cur.LastHeartbeat, cur.ExpiresAt = at.Unix(), expiresAt.Unix()
		return b.write(name, cur)
	})
	if err != nil {
		return fmt.Errorf("heartbeat lock %s: %w", key, err)
	}
	return nil
}

// Release deletes the record of key iff its lockId is lockID. The key's fence
// survives. Errors: lockmgr.ErrLockLost (nothing deleted), I/O or ctx errors.
func (b *Backend) Release(ctx context.Context, key, lockID string) error {
	err := b.withLock(ctx, func() error {
		name := encodeKey(key)
		if _, err := b.owned(name, lockID); err != nil {
			return err
		}
		if err := os.Remove(filepath.Join(b.dir, name+recordExt)); err != nil {
			return err
		}
		return syncDir(b.dir)
	})
	if err != nil {
		return fmt.Errorf("release lock %s: %w", key, err)
	}
	return nil
}

// owned returns the record stored under name if its lockId is lockID, else
// lockmgr.ErrLockLost.
func (b *Backend) owned(name, lockID string) (lockmgr.Record, error) {
	cur, err := b.read(name)
	if errors.Is(err, lockmgr.ErrNotFound) {
		return lockmgr.Record{}, lockmgr.ErrLockLost
	}
	if err != nil {
		return lockmgr.Record{}, err
	}
	if cur.LockID != lockID {
		return lockmgr.Record{}, fmt.Errorf("%w (now held by %s, lock id %s)", lockmgr.ErrLockLost, cur.LockedBy, cur.LockID)
	}
	return cur, nil
}

// Get returns the record of key, expired or not. Errors: lockmgr.ErrNotFound,
// a damaged record file, ctx's error.
func (b *Backend) Get(ctx context.Context, key string) (lockmgr.Record, error) {
	if err := b.usable(ctx); err != nil {
		return lockmgr.Record{}, fmt.Errorf("get lock %s: %w", key, err)
	}
	rec, err := b.read(encodeKey(key))
	if err != nil {
		return lockmgr.Record{}, fmt.Errorf("get lock %s: %w", key, err)
	}
	return rec, nil
}

// List returns every record whose lockKey starts with prefix ("" = all),
// expired ones included, sorted by key. Records released while List runs may
// or may not appear. Errors: unreadable directory, a damaged record, ctx's error.
func (b *Backend) List(ctx context.Context, prefix string) ([]lockmgr.Record, error) {
	if err := b.usable(ctx); err != nil {
		return nil, fmt.Errorf("list locks: %w", err)
	}
	entries, err := os.ReadDir(b.dir)
	if isNotExist(err) {
		return nil, nil // nothing was ever locked here
	}
	if err != nil {
		return nil, fmt.Errorf("list locks in %s: %w", b.dir, err)
	}
	var out []lockmgr.Record
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), recordExt)
		if !ok || e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if key, ok := decodeKey(name); ok && !strings.HasPrefix(key, prefix) {
			continue
		}
		rec, err := b.read(name)
		if errors.Is(err, lockmgr.ErrNotFound) {
			continue // released since ReadDir
		}
		if err != nil {
			return nil, fmt.Errorf("list locks: %w", err)
		}
		if strings.HasPrefix(rec.LockKey, prefix) {
			out = append(out, rec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LockKey < out[j].LockKey })
	return out, nil
}

func (b *Backend) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-b.close:
		return errClosed
	default:
		return nil
	}
}

// Close makes later calls fail; it releases no lock records. Safe to call
// more than once.
func (b *Backend) Close() error {
	b.sem <- struct{}{}
	defer func() { <-b.sem }()
	select {
	case <-b.close:
	default:
		close(b.close)
	}
	return nil
}

// isNotExist reports a missing file.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

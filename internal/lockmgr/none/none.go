package none

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Warning is the one line the CLI prints on stderr for every command when the
// lock backend is none.
const Warning = "warning: locking is off (backend.lock: none): nothing stops two deploys of the same stack at once"

// Backend grants every lock. Safe for concurrent use.
type Backend struct {
	fence atomic.Int64 // last fence handed out, in this process
}

var _ lockmgr.Backend = (*Backend)(nil)

// New returns a Backend whose fences start at 1.
func New() *Backend { return &Backend{} }

// TryAcquire always succeeds (unless ctx is done) and returns rec with a
// fence larger than any this Backend returned before. Nothing is stored.
func (b *Backend) TryAcquire(ctx context.Context, rec lockmgr.Record) (lockmgr.Record, error) {
	if err := ctx.Err(); err != nil {
		return lockmgr.Record{}, fmt.Errorf("acquire lock %s: %w", rec.LockKey, err)
	}
	rec.Fence = b.fence.Add(1)
	return rec, nil
}

// Heartbeat always succeeds unless ctx is done.
func (b *Backend) Heartbeat(ctx context.Context, key, lockID string, at, expiresAt time.Time) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("heartbeat lock %s: %w", key, err)
	}
	return nil
}

// Release always succeeds unless ctx is done.
func (b *Backend) Release(ctx context.Context, key, lockID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release lock %s: %w", key, err)
	}
	return nil
}

// Get always returns ErrNotFound: no record is kept.
func (b *Backend) Get(ctx context.Context, key string) (lockmgr.Record, error) {
	if err := ctx.Err(); err != nil {
		return lockmgr.Record{}, fmt.Errorf("read lock %s: %w", key, err)
	}
	return lockmgr.Record{}, fmt.Errorf("read lock %s: locking is off: %w", key, lockmgr.ErrNotFound)
}

// List always returns no records.
func (b *Backend) List(ctx context.Context, prefix string) ([]lockmgr.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list locks %q: %w", prefix, err)
	}
	return nil, nil
}

// Close does nothing.
func (b *Backend) Close() error { return nil }

// LockingOff implements lockmgr.Off: this backend takes no locks.
func (*Backend) LockingOff() bool { return true }

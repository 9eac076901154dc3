package lockmgr

import (
	"context"
	"time"
)

// Backend stores lock records. Each method is one conditional operation against
// the store; retry, backoff, hierarchy and heartbeats live above it in Manager
// (docs/design.md#lock-protocol). Times passed in come from the caller's clock: a backend
// never decides expiry with its own clock, so tests can move time.
type Backend interface {
	// TryAcquire writes rec under rec.LockKey if no record exists or the existing
	// one has expiresAt < rec.LockedAt (expired counts as free). It returns rec
	// with Fence set to a value larger than any fence ever returned for the key,
	// across release and expiry. A live holder gives *HeldError{holder's record}.
	TryAcquire(ctx context.Context, rec Record) (Record, error)
	// Heartbeat sets lastHeartbeat=at and expiresAt on the record of key iff its
	// lockId is lockID; otherwise ErrLockLost.
	Heartbeat(ctx context.Context, key, lockID string, at, expiresAt time.Time) error
	// Release deletes the record of key iff its lockId is lockID; otherwise
	// ErrLockLost (nothing is deleted).
	Release(ctx context.Context, key, lockID string) error
	// Get returns the record of key, expired or not; ErrNotFound if none.
	Get(ctx context.Context, key string) (Record, error)
	// List returns every record whose key starts with prefix ("" = all),
	// strongly consistent, expired ones included, sorted by key.
	List(ctx context.Context, prefix string) ([]Record, error)
	// Close releases connections; it does not release locks.
	Close() error
}

package lockmgr

import (
	"context"
	"math"
	"time"
)

// Verdict is the state of a lock record at a moment, as `state locks` shows
// it (docs/locking.md#verdicts-state-locks).
type Verdict string

// The verdicts.
const (
	Active  Verdict = "ACTIVE"
	Stale   Verdict = "STALE"   // lastHeartbeat older than StaleAfter
	Expired Verdict = "EXPIRED" // expiresAt passed: free for takeover
)

// Status is a record with its verdict at the time of listing (docs/locking.md#verdicts-state-locks).
type Status struct {
	Record
	Verdict      Verdict       `json:"status"` // ACTIVE | STALE | EXPIRED
	Level        Level         `json:"level"`
	Age          time.Duration `json:"-"`
	HeartbeatAge time.Duration `json:"-"`
	// HolderGone: the holder ran on this host and its pid is gone
	// (HolderGone); `state locks` says "pid not running".
	HolderGone bool `json:"holder_gone,omitempty"`
}

// Verdict classifies rec at the Manager's now.
func (m *Manager) Verdict(rec Record) Verdict {
	now := m.opts.Now()
	switch {
	case rec.Expired(now):
		return Expired
	// Records keep whole seconds: compare whole seconds, so a holder that
	// heartbeats on time never looks up to a second staler than it is.
	case now.Unix()-rec.LastHeartbeat > int64(math.Ceil(m.opts.StaleAfter.Seconds())):
		return Stale
	default:
		return Active
	}
}

// Inspect returns rec with its verdict (the Manager's clock and
// stale_after), level and ages at the Manager's now.
func (m *Manager) Inspect(rec Record) Status {
	now := m.opts.Now()
	pk, _ := ParseKey(rec.LockKey)
	return Status{
		Record:       rec,
		Verdict:      m.Verdict(rec),
		Level:        pk.Level,
		Age:          now.Sub(time.Unix(rec.LockedAt, 0)),
		HeartbeatAge: now.Sub(time.Unix(rec.LastHeartbeat, 0)),
		HolderGone:   HolderGone(rec),
	}
}

// Get returns the record of key, expired or not, with its verdict
// (Inspect). Errors: ErrNotFound (wrapped) when no record holds key, or a
// backend error.
func (m *Manager) Get(ctx context.Context, key string) (Status, error) {
	rec, err := m.b.Get(ctx, key)
	if err != nil {
		return Status{}, err
	}
	return m.Inspect(rec), nil
}

// List returns the records under prefix with their verdicts (Inspect),
// sorted by key. StackPrefix and StackKey build the prefixes of a stack and
// of a stack/environment ("" lists every key).
func (m *Manager) List(ctx context.Context, prefix string) ([]Status, error) {
	recs, err := m.b.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(recs))
	for _, r := range recs {
		if IsQueueKey(r.LockKey) {
			continue // waiters: Waiters
		}
		out = append(out, m.Inspect(r))
	}
	return out, nil
}

// ForceUnlock deletes the record of key iff its lockId is lockID (so a lock
// taken over in the meantime is never broken) and writes lock.force_unlocked.
// Errors: ErrLockLost when the record is gone or has another lockId.
func (m *Manager) ForceUnlock(ctx context.Context, key, lockID string, by string) error {
	rec, _ := m.b.Get(ctx, key)
	if err := m.b.Release(ctx, key, lockID); err != nil {
		return err
	}
	m.opts.Audit.Info("lock.force_unlocked", "lock_key", key, "lock_id", lockID,
		"locked_by", rec.LockedBy, "unlocked_by", by, "metadata", rec.Metadata)
	return nil
}

package lockmgr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Lease is a held lock with its heartbeat.
type Lease struct {
	m       *Manager
	mu      sync.Mutex
	rec     Record
	ctx     context.Context
	cancel  context.CancelCauseFunc
	stop    chan struct{}
	done    chan struct{}
	release sync.Once
	relErr  error
	// left is closed once the acquisition's waiter record is removed (nil:
	// it never queued).
	left <-chan struct{}
	// hbCancel abandons a heartbeat in flight when the lease is released.
	hbCtx    context.Context
	hbCancel context.CancelFunc
	// acquired is when the lease was taken, to the Manager clock's precision
	// (the record keeps whole seconds): lock.released's duration_seconds.
	acquired time.Time
}

func (m *Manager) startLease(parent context.Context, rec Record) *Lease {
	ctx, cancel := context.WithCancelCause(parent)
	l := &Lease{m: m, rec: rec, ctx: ctx, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{}), acquired: m.opts.Now()}
	l.hbCtx, l.hbCancel = context.WithCancel(context.WithoutCancel(ctx))
	m.held.Add(1)
	m.opts.Audit.Info("lock.acquired", "lock_key", rec.LockKey, "lock_id", rec.LockID,
		"locked_by", rec.LockedBy, "fence", rec.Fence, "metadata", rec.Metadata)
	go l.heartbeat()
	return l
}

// Record returns the lease's record as last written (expiresAt and
// lastHeartbeat follow heartbeats).
func (l *Lease) Record() Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

// Context is cancelled, with cause ErrLockLost, when a heartbeat finds the lock
// gone or taken, or cannot renew it before it expires; and when the context
// given to Acquire ends.
func (l *Lease) Context() context.Context { return l.ctx }

// Lost returns ErrLockLost once the lease is lost, else nil.
func (l *Lease) Lost() error {
	if errors.Is(context.Cause(l.ctx), ErrLockLost) {
		return ErrLockLost
	}
	return nil
}

func (l *Lease) heartbeat() {
	defer close(l.done)
	o := l.m.opts
	t := time.NewTicker(o.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		now := o.Now()
		exp := now.Add(o.TTL)
		rec := l.Record()
		// Never wait on the backend past the lease's own expiry.
		limit := min(o.HeartbeatInterval, time.Unix(rec.ExpiresAt, 0).Sub(now))
		if limit <= 0 {
			l.cancel(fmt.Errorf("%w: lease expired at %s before a heartbeat could renew it", ErrLockLost,
				time.Unix(rec.ExpiresAt, 0).UTC().Format(time.RFC3339)))
			return
		}
		ctx, cancel := context.WithTimeout(l.hbCtx, limit)
		err := l.m.b.Heartbeat(ctx, rec.LockKey, rec.LockID, now, exp)
		cancel()
		select {
		case <-l.stop:
			return // released meanwhile: the release decides, not this heartbeat
		default:
		}
		o.Observer.LockHeartbeat(rec.LockKey, err)
		if err == nil {
			l.mu.Lock()
			l.rec.LastHeartbeat, l.rec.ExpiresAt = now.Unix(), exp.Unix()
			l.mu.Unlock()
			continue
		}
		o.Audit.Warn("lock.heartbeat_failed", "lock_key", rec.LockKey, "lock_id", rec.LockID, "error", err.Error())
		// Lost for sure, or unreachable for so long that the next heartbeat
		// (one interval away, taking up to one more) could not renew the
		// lease before it expires: stop the work now, before someone else
		// can take over (docs/locking.md, "Partitions").
		if errors.Is(err, ErrLockLost) || !o.Now().Add(2*o.HeartbeatInterval).Before(time.Unix(rec.ExpiresAt, 0)) {
			l.cancel(fmt.Errorf("%w: %v", ErrLockLost, err))
			return
		}
	}
}

// waitLeft waits until the acquisition's waiter record is removed.
func (l *Lease) waitLeft() {
	if l.left != nil {
		<-l.left
	}
}

// releaseRetrying releases, waiting out passing backend failures (a failover,
// a restart) with backoff until ctx ends.
func (m *Manager) releaseRetrying(ctx context.Context, key, lockID string) error {
	delay := 50 * time.Millisecond
	for {
		err := m.b.Release(ctx, key, lockID)
		if err == nil || !Transient(m.b, err) || sleep(ctx, delay) != nil {
			return err
		}
		delay = min(2*delay, time.Second)
	}
}

// Keep stops the heartbeat and leaves the record in place, to expire at its
// expiresAt: nobody can take the key until then. The guard keeps its lock
// after stopping a shared resource so that a racing stop cannot run a
// second time (docs/guard.md). It writes lock.kept; Release after Keep does
// nothing.
func (l *Lease) Keep() {
	l.release.Do(func() {
		close(l.stop)
		<-l.done
		l.hbCancel()
		l.waitLeft()
		rec := l.Record()
		l.m.opts.Audit.Info("lock.kept", "lock_key", rec.LockKey, "lock_id", rec.LockID,
			"expires_at", rec.ExpiresAt)
		l.cancel(context.Canceled)
		l.m.held.Add(-1)
	})
}

// Release stops the heartbeat and deletes the record iff it is still ours,
// waiting out passing backend failures until ctx ends;
// it writes lock.released with duration_seconds. ErrLockLost reports a lease
// that was lost (broken or taken over) before the release. Safe to call twice.
func (l *Lease) Release(ctx context.Context) error {
	l.release.Do(func() {
		// A heartbeat in flight is abandoned, not waited for: both are
		// conditional on the lockId, so whichever the backend applies
		// first, the record ends released (docs/locking.md, "Handoff").
		close(l.stop)
		l.hbCancel()
		rec := l.Record()
		l.relErr = l.m.releaseRetrying(ctx, rec.LockKey, rec.LockID)
		<-l.done
		l.waitLeft()
		held := l.m.opts.Now().Sub(l.acquired)
		dur := held.Seconds()
		l.m.opts.Observer.LockReleased(rec.LockKey, held)
		if l.relErr != nil {
			l.m.opts.Audit.Warn("lock.released", "lock_key", rec.LockKey, "lock_id", rec.LockID,
				"duration_seconds", dur, "error", l.relErr.Error())
		} else {
			l.m.opts.Audit.Info("lock.released", "lock_key", rec.LockKey, "lock_id", rec.LockID,
				"duration_seconds", dur)
		}
		l.cancel(context.Canceled)
		l.m.held.Add(-1)
	})
	return l.relErr
}

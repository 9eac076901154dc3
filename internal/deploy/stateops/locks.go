package stateops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// Locking runs the lock use cases, which need the lock backend and no
// state: Locks, Unlock and Exec. Like Ops', each is a method taking
// ctx and its request.
type Locking struct{ d LockDeps }

// NewLocking returns the Locking of d; zero fields of d take defaults.
func NewLocking(d LockDeps) *Locking { return &Locking{d: d.withDefaults()} }

// LockDeps are the collaborators of Locking.
type LockDeps struct {
	// Locks is the Manager of the lock backend: verdicts come from its
	// clock and its configured stale_after.
	Locks *lockmgr.Manager
	// Observer counts the STALE locks Locks lists (metrics); nil discards them.
	Observer StaleObserver
	// Getenv describes who breaks or takes a lock (lockmgr.Holder); default
	// os.Getenv.
	Getenv func(string) string
	// Environ is the environment a lock exec command starts from
	// (Factory.Environ), before the variables of the secrets key are
	// removed (proc.Environ) and DEPLOYER_LOCK_* added; default
	// os.Environ.
	Environ func() []string
	// Ops opens the Ops that records the deployment of a broken lock
	// as abandoned; Unlock calls it only when there is one to record. Nil:
	// nothing is recorded.
	Ops func(context.Context) (*Ops, error)
	// Reporter hears each lock Unlock broke (docs/design.md#reporting);
	// nil: no one.
	Reporter Reporter
}

// withDefaults returns d with os.Getenv and os.Environ for an unset Getenv
// and Environ (deployer's own environment), and NoReporter for an unset
// Reporter.
func (d LockDeps) withDefaults() LockDeps {
	if d.Reporter == nil {
		d.Reporter = NoReporter{}
	}
	if d.Getenv == nil {
		d.Getenv = os.Getenv
	}
	if d.Environ == nil {
		d.Environ = os.Environ
	}
	return d
}

// StaleObserver receives each STALE lock `state locks` finds
// (docs/observability.md#metrics).
type StaleObserver interface {
	StaleDetected(lockKey string)
}

// LocksRequest narrows the listing of `state locks`: Stack alone lists the
// locks of a stack, Stack and Env those of one environment; neither lists
// every lock, lock exec's included.
type LocksRequest struct {
	Stack, Env string
}

// LocksResult is what `state locks` shows (docs/locking.md#verdicts-state-locks).
type LocksResult struct {
	// LockingOff: the lock backend is none; no lock is taken or listed.
	LockingOff bool
	// Locks are the records held, sorted by key, with the Manager's verdicts.
	Locks []lockmgr.Status
	// Waiters are the processes waiting for locks of the scope, in arrival
	// order, with their positions (docs/locking.md#wait-queue); expired
	// ones (their process died) are left out.
	Waiters []lockmgr.Waiter
}

// Locks lists the locks of req's scope with their verdicts (ACTIVE, STALE,
// EXPIRED at the Manager's clock and configured stale_after) and reports
// each STALE one to d.Observer. Errors: the backend's.
func (l *Locking) Locks(ctx context.Context, req LocksRequest) (*LocksResult, error) {
	d := l.d
	if !d.Locks.Enabled() {
		return &LocksResult{LockingOff: true}, nil
	}
	prefix := ""
	switch {
	case req.Env != "":
		prefix = lockmgr.StackKey(req.Stack, req.Env)
	case req.Stack != "":
		prefix = lockmgr.StackPrefix(req.Stack)
	}
	all, err := d.Locks.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := &LocksResult{}
	for _, s := range all {
		if req.Env != "" {
			// The prefix of env "dev" also matches env "dev2".
			if pk, ok := lockmgr.ParseKey(s.LockKey); !ok || pk.Env != req.Env || pk.Stack != req.Stack {
				continue
			}
		}
		out.Locks = append(out.Locks, s)
		if s.Verdict == lockmgr.Stale && d.Observer != nil {
			d.Observer.StaleDetected(s.LockKey)
		}
	}
	waiters, err := d.Locks.Waiters(ctx, prefix)
	if err != nil {
		return nil, err
	}
	for _, w := range waiters {
		if pk, ok := lockmgr.ParseKey(w.Key); w.Position == 0 || req.Env != "" && (!ok || pk.Env != req.Env || pk.Stack != req.Stack) {
			continue
		}
		out.Waiters = append(out.Waiters, w)
	}
	return out, nil
}

// UnlockRequest asks to break one lock (docs/locking.md#breaking-a-lock).
type UnlockRequest struct {
	// core.Target names the lock of its level: stack, service or component.
	Target core.Target
	// Key, when set, names the lock of lock exec instead: custom:Key.
	Key string
	// LockID breaks the lock only while this holder has it; breaking an
	// ACTIVE lock needs it.
	LockID string
	// Confirm is called with the lock about to be broken once the policy
	// allows it; an error stops the unlock with nothing broken and is
	// returned as is. Nil: no confirmation.
	Confirm func(lockmgr.Status) error
	// Broken is called once the lock is gone, before its deployment is
	// recorded as abandoned. Nil: not called.
	Broken func(lockmgr.Status)
}

// UnlockResult is what Unlock broke.
type UnlockResult struct {
	// Lock is the broken lock as it was found, with its verdict.
	Lock lockmgr.Status
	// RecordErr says why the broken holder's deployment could not be recorded
	// as abandoned in the history; the lock is broken all the same.
	RecordErr error
}

// UnlockRefusedError is Unlock's refusal to break a lock: the given lock id
// is not the holder's, or the lock is ACTIVE and no lock id was given.
// Nothing was broken.
type UnlockRefusedError struct {
	Lock   lockmgr.Status // the lock as found
	LockID string         // the lock id asked for; "" when none
}

func (e *UnlockRefusedError) Error() string {
	rec := e.Lock.Record.Printable()
	if e.LockID != "" && e.LockID != e.Lock.LockID {
		asked := sanitize.Line(e.LockID)
		return fmt.Sprintf("lock %s is held with lock id %s, not %s: nothing was broken (%s is mistyped, or names a holder that no longer holds it); check the id with deployer state locks",
			rec.LockKey, rec.LockID, asked, asked)
	}
	return fmt.Sprintf("lock %s is ACTIVE (heartbeat %s ago, by %s): breaking it needs --lock-id %s",
		rec.LockKey, max(e.Lock.HeartbeatAge.Round(time.Second), 0), rec.LockedBy, sanitize.Command(e.Lock.LockID))
}

// notHeldError: no record holds the key.
type notHeldError struct{ key string }

func (e *notHeldError) Error() string {
	return fmt.Sprintf("no lock is held on %s: nothing to unlock (see deployer state locks)", e.key)
}

func (e *notHeldError) Unwrap() error { return lockmgr.ErrNotFound }

// Unlock breaks the lock req names (docs/locking.md#breaking-a-lock):
// a STALE or EXPIRED lock, or an ACTIVE one whose lock id is given; a lock
// id that is not the holder's breaks nothing. Only the lock id found is
// deleted, so a lock taken over meanwhile survives. The broken holder's
// deployment (deploy or destroy of a core.Target) is then recorded as abandoned
// in the history (docs/design.md#abandoned-deployments).
//
// Errors: *UnlockRefusedError; an error wrapping lockmgr.ErrNotFound when
// no lock is held; Confirm's error; an error when the lock changed hands
// before it was broken; the backend's.
func (l *Locking) Unlock(ctx context.Context, req UnlockRequest) (*UnlockResult, error) {
	d := l.d
	key := lockmgr.CustomKey(req.Key)
	if req.Key == "" {
		key = req.Target.LockKey()
	}
	st, err := d.Locks.Get(ctx, key)
	if errors.Is(err, lockmgr.ErrNotFound) {
		return nil, &notHeldError{key: key}
	}
	if err != nil {
		return nil, err
	}
	if (req.LockID != "" && req.LockID != st.LockID) || (st.Verdict == lockmgr.Active && req.LockID == "") {
		return nil, &UnlockRefusedError{Lock: st, LockID: req.LockID}
	}
	if req.Confirm != nil {
		if err := req.Confirm(st); err != nil {
			return nil, err
		}
	}
	by, _ := lockmgr.Holder(d.Getenv)
	if err := d.Locks.ForceUnlock(ctx, key, st.LockID, by); err != nil {
		if errors.Is(err, lockmgr.ErrLockLost) {
			return nil, fmt.Errorf("lock %s changed hands while unlocking (lock id %s is gone): nothing was broken; check deployer state locks", key, st.LockID)
		}
		return nil, err
	}
	if req.Broken != nil {
		req.Broken(st)
	}
	d.Reporter.LockBroken(st)
	res := &UnlockResult{Lock: st}
	if req.Key == "" && st.Metadata.DeploymentID != "" && d.Ops != nil {
		svc, err := d.Ops(ctx)
		if err == nil {
			err = svc.RecordBroken(ctx, BrokenRequest{Target: req.Target, Lock: st.Record})
		}
		res.RecordErr = err
	}
	return res, nil
}

package lockmgr

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/google/uuid"
)

// Request asks for one lease.
type Request struct {
	Key      string // StackKey, ServiceKey, ComponentKey or CustomKey
	LockedBy string // default: Holder()
	Metadata Metadata
	// Timeout is how long to wait for a held lock: 0 fails at once with
	// *HeldError; otherwise retries with exponential backoff and jitter.
	Timeout time.Duration
	// MaxRetries, when above 0, also caps the retries after the first try
	// (the shared-resource guard gives up after 3: docs/guard.md).
	MaxRetries int
	// OnWait, when set, is called like Options.OnWait, after it, for this
	// request only (the deploy notes the holders it waited for).
	OnWait func(WaitEvent)
}

// Acquire takes the lease of r.Key. For hierarchical keys it then checks the
// ancestors and descendants in the same stack/environment (write, then a
// strongly consistent List): a conflicting live record makes it withdraw its
// own record and treat the key as held. Errors: *HeldError (holder's record)
// when the lock stays held past r.Timeout, ctx's error, or a backend error.
func (m *Manager) Acquire(ctx context.Context, r Request) (*Lease, error) {
	start := m.opts.Now()
	l, err := m.acquire(ctx, r)
	m.opts.Observer.LockAcquired(r.Key, m.opts.Now().Sub(start), err)
	return l, err
}

func (m *Manager) acquire(ctx context.Context, r Request) (*Lease, error) {
	pk, ok := ParseKey(r.Key)
	if !ok {
		return nil, fmt.Errorf("invalid lock key %q", r.Key)
	}
	if r.LockedBy == "" {
		r.LockedBy, r.Metadata = fillHolder(r.Metadata)
	}
	r.Metadata = r.Metadata.bounded()
	a := &acquisition{m: m, r: r, pk: pk, start: m.opts.Now(), lockID: uuid.NewString()}
	a.bo = backoff.NewExponentialBackOff()
	a.bo.InitialInterval = 100 * time.Millisecond
	a.bo.MaxInterval = m.opts.MaxRetryInterval
	a.bo.RandomizationFactor = 0.5
	for {
		err := m.checkClock(ctx)
		if err == nil {
			break
		}
		if err := a.retry(ctx, err); err != nil {
			return nil, err
		}
	}
	var (
		rec Record
		err error
	)
	if r.Timeout > 0 && r.MaxRetries == 0 && m.Enabled() {
		rec, err = a.queue(ctx)
	} else {
		rec, err = a.backoff(ctx)
	}
	if err != nil {
		a.leave(ctx)
		if a.ghost {
			// A try whose outcome is unknown may have written our
			// record: never leave it to hold the key until it expires.
			m.removeOwn(ctx, r.Key, a.lockID)
		}
		a.done(false)
		var held *HeldError
		if errors.As(err, &held) && held.Status == nil {
			st := m.Inspect(held.Record)
			held.Status = &st
			if a.waited {
				held.Waited = a.elapsed()
			}
		}
		return nil, err
	}
	a.done(true)
	l := m.startLease(ctx, rec)
	if a.q != nil {
		// The waiter record goes while the holder's work starts, not
		// before: the handoff does not wait for it. Release and Keep
		// wait for it, so it never outlives the lease.
		left := make(chan struct{})
		l.left = left
		go func() {
			defer close(left)
			a.leave(ctx)
		}()
	}
	return l, nil
}

// acquisition is one Acquire call: one lockId for all its tries, so a try
// whose reply was lost is recognised as ours by the next one (docs/locking.md,
// "Lost replies").
type acquisition struct {
	m      *Manager
	r      Request
	pk     ParsedKey
	start  time.Time
	lockID string
	bo     *backoff.ExponentialBackOff
	last   Record // the live record last in the way
	waited bool
	// ghost: a try failed with an unknown outcome, or a withdrawal failed;
	// our record may be stored under r.Key.
	ghost bool
	// outage is the passing backend failure being waited out, reported once.
	outage   string
	q        *queued
	notified time.Time // when OnWait last heard of the wait
	lastPos  int
}

func (a *acquisition) elapsed() time.Duration { return a.m.opts.Now().Sub(a.start) }

func (a *acquisition) notify(ev WaitEvent) {
	ev.Key, ev.Since = a.r.Key, a.start
	if ev.Holder.LockKey == "" && !ev.Done && ev.Retrying == nil {
		ev.Holder = a.last
	}
	if a.m.opts.OnWait != nil {
		a.m.opts.OnWait(ev)
	}
	if a.r.OnWait != nil {
		a.r.OnWait(ev)
	}
}

func (a *acquisition) done(acquired bool) {
	if a.waited {
		el := a.elapsed()
		a.notify(WaitEvent{Holder: a.last, Elapsed: el, Left: max(a.r.Timeout-el, 0), Done: true, Acquired: acquired})
	}
}

// retry waits out err when it is a passing backend failure and time is
// left: it reports the failure once (WaitEvent.Retrying) and sleeps one
// backoff period. Otherwise it returns err.
func (a *acquisition) retry(ctx context.Context, err error) error {
	if !Transient(a.m.b, err) {
		return err
	}
	el := a.elapsed()
	left := a.r.Timeout - el
	if left <= 0 {
		return err
	}
	wait := min(a.bo.NextBackOff(), left)
	if msg := err.Error(); msg != a.outage {
		a.outage = msg
		a.notify(WaitEvent{Retrying: err, Elapsed: el, Left: left, RetryIn: wait, First: !a.waited})
		a.waited = true
	}
	return sleep(ctx, wait)
}

// try is tryOnce with the acquisition's lockId; a failure of unknown outcome
// marks a possible ghost record.
func (a *acquisition) try(ctx context.Context) (Record, error) {
	rec, err := a.m.tryOnce(ctx, a.r, a.pk, a.lockID)
	var held *HeldError
	if err == nil {
		a.ghost, a.outage = false, ""
		a.bo.Reset()
	} else if errors.As(err, &held) {
		a.outage = ""
		a.last = held.Record
	} else if Transient(a.m.b, err) {
		a.ghost = true
	}
	return rec, err
}

// backoff is the wait without a queue (a zero Timeout fails at once; the
// shared-resource guard caps retries): exponential backoff with jitter.
func (a *acquisition) backoff(ctx context.Context) (Record, error) {
	for retries := 0; ; {
		rec, err := a.try(ctx)
		if err == nil {
			return rec, nil
		}
		var held *HeldError
		if !errors.As(err, &held) {
			if err := a.retry(ctx, err); err != nil {
				return Record{}, err
			}
			continue
		}
		elapsed := a.elapsed()
		left := a.r.Timeout - elapsed
		if left <= 0 || (a.r.MaxRetries > 0 && retries >= a.r.MaxRetries) {
			return Record{}, err
		}
		retries++
		wait := min(a.bo.NextBackOff(), left)
		a.notify(WaitEvent{Holder: held.Record, Elapsed: elapsed, Left: left, RetryIn: wait, First: !a.waited})
		a.waited = true
		if err := sleep(ctx, wait); err != nil {
			return Record{}, err
		}
	}
}

// tryOnce writes the record, then enforces the hierarchy.
func (m *Manager) tryOnce(ctx context.Context, r Request, pk ParsedKey, lockID string) (Record, error) {
	now := m.opts.Now()
	rec := Record{
		LockKey:       r.Key,
		LockID:        lockID,
		LockedBy:      r.LockedBy,
		LockedAt:      now.Unix(),
		ExpiresAt:     now.Add(m.opts.TTL).Unix(),
		LastHeartbeat: now.Unix(),
		Metadata:      r.Metadata,
	}
	if err := checkWritable(rec); err != nil {
		return Record{}, err
	}
	got, err := m.b.TryAcquire(ctx, rec)
	var held *HeldError
	if errors.As(err, &held) && held.Record.LockKey == rec.LockKey && held.Record.LockID == rec.LockID {
		// Held by our own lockId: a retried write whose first reply was
		// lost (docs/locking.md, "Lost replies"). It is our acquisition.
		got, err = held.Record, nil
	}
	if err != nil {
		return Record{}, err
	}
	if pk.Level == LevelCustom {
		return got, nil
	}
	conflict, err := m.hierarchyConflict(ctx, got, pk)
	if err == nil && conflict == nil {
		return got, nil
	}
	// Withdraw our record; the conflicting holder (or the error) wins.
	relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if rerr := m.b.Release(relCtx, got.LockKey, got.LockID); rerr != nil && !errors.Is(rerr, ErrLockLost) {
		err = errors.Join(err, fmt.Errorf("withdraw lock %s: %w", got.LockKey, rerr))
	}
	if err != nil {
		return Record{}, err
	}
	return Record{}, &HeldError{Record: *conflict}
}

// hierarchyConflict lists the stack/environment and returns a live record
// conflicting with ours. When ours was written first (earlier lockedAt, then
// lower lockId) it re-reads a few times so the later writer can withdraw:
// two racing writers then do not both give up.
func (m *Manager) hierarchyConflict(ctx context.Context, ours Record, pk ParsedKey) (*Record, error) {
	scope := StackKey(pk.Stack, pk.Env)
	for attempt := 0; ; attempt++ {
		recs, err := m.b.List(ctx, scope)
		if err != nil {
			return nil, fmt.Errorf("check lock hierarchy of %s: %w", scope, err)
		}
		now := m.opts.Now()
		var conflict *Record
		for i := range recs {
			o := recs[i]
			if o.LockKey == ours.LockKey || o.Expired(now) || !Conflicts(ours.LockKey, o.LockKey) {
				continue
			}
			conflict = &o
			break
		}
		if conflict == nil {
			return nil, nil
		}
		if !precedes(ours, *conflict) || attempt >= 4 {
			return conflict, nil
		}
		if err := sleep(ctx, time.Duration(attempt+1)*25*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func precedes(a, b Record) bool {
	if a.LockedAt != b.LockedAt {
		return a.LockedAt < b.LockedAt
	}
	return a.LockID < b.LockID
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

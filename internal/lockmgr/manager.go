package lockmgr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/google/uuid"
)

// Defaults (docs/configuration.md#keys, docs/locking.md#lifetime).
const (
	DefaultTTL               = time.Hour
	DefaultHeartbeatInterval = 30 * time.Second
	DefaultStaleAfter        = 2 * time.Minute
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

// Options tune a Manager. Zero values take the defaults above.
type Options struct {
	TTL               time.Duration // expiresAt = now + TTL, renewed by heartbeats
	HeartbeatInterval time.Duration
	StaleAfter        time.Duration
	Now               func() time.Time
	// Audit receives lock.acquired, lock.released, lock.heartbeat_failed and
	// lock.force_unlocked events (docs/locking.md#audit-log). Nil discards them.
	Audit *slog.Logger
	// OnWait is called before each wait for a held lock, and once more when
	// the waiting ends (Done), acquired or not. It runs on the caller's
	// goroutine; deciding how often to tell the user is the caller's
	// (docs/locking.md#waiting-for-a-lock).
	OnWait func(WaitEvent)
	// MaxRetryInterval caps the backoff between tries (default 5s).
	MaxRetryInterval time.Duration
	// Observer receives acquisition, heartbeat and release events for
	// metrics. Nil discards them.
	Observer Observer
	// MaxClockSkew is how far the backend's clock may be from Now before
	// Acquire refuses with *ClockSkewError (default DefaultMaxClockSkew;
	// negative: never check). Checked once per Manager, on backends that
	// implement ServerClock.
	MaxClockSkew time.Duration
}

// Manager owns acquisition with backoff and jitter, the lock hierarchy, and
// heartbeats, in one place above every Backend (docs/design.md#lock-protocol).
type Manager struct {
	b       Backend
	opts    Options
	held    atomic.Int64 // leases acquired and not yet released or kept
	clockOK atomic.Bool  // the backend's clock was checked and agreed
}

// NewManager returns a Manager over b.
func NewManager(b Backend, o Options) *Manager {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = DefaultStaleAfter
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Audit == nil {
		o.Audit = slog.New(slog.DiscardHandler)
	}
	if o.MaxRetryInterval <= 0 {
		o.MaxRetryInterval = 5 * time.Second
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	if o.MaxClockSkew == 0 {
		o.MaxClockSkew = DefaultMaxClockSkew
	}
	return &Manager{b: b, opts: o}
}

// Backend returns the store the Manager writes to.
func (m *Manager) Backend() Backend { return m.b }

// Held is the number of leases this Manager acquired that are not yet
// released (or left to expire with Keep): while it is above zero a process
// must not exit without releasing them.
func (m *Manager) Held() int { return int(m.held.Load()) }

// Options returns the effective options.
func (m *Manager) Options() Options { return m.opts }

// WaitEvent describes one step of waiting for a held lock.
type WaitEvent struct {
	Key     string // the key asked for
	Holder  Record // the live record in the way (the key's, or a conflicting one's)
	Since   time.Time
	Elapsed time.Duration // since the first try
	Left    time.Duration // until Request.Timeout runs out
	RetryIn time.Duration // until the next try (0 when Done)
	First   bool          // the first wait of this Acquire
	// Done: the waiting is over; Acquired says whether the lease was taken.
	Done, Acquired bool
}

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
	if err := m.checkClock(ctx); err != nil {
		return nil, err
	}
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = 100 * time.Millisecond
	bo.MaxInterval = m.opts.MaxRetryInterval
	bo.RandomizationFactor = 0.5
	start := m.opts.Now()
	waited := false
	var last Record
	notify := func(ev WaitEvent) {
		ev.Key, ev.Since = r.Key, start
		if m.opts.OnWait != nil {
			m.opts.OnWait(ev)
		}
		if r.OnWait != nil {
			r.OnWait(ev)
		}
	}
	done := func(acquired bool) {
		if waited {
			el := m.opts.Now().Sub(start)
			notify(WaitEvent{Holder: last, Elapsed: el, Left: max(r.Timeout-el, 0), Done: true, Acquired: acquired})
		}
	}
	for retries := 0; ; retries++ {
		rec, err := m.tryOnce(ctx, r, pk)
		if err == nil {
			done(true)
			return m.startLease(ctx, rec), nil
		}
		var held *HeldError
		if !errors.As(err, &held) {
			done(false)
			return nil, err
		}
		last = held.Record
		elapsed := m.opts.Now().Sub(start)
		left := r.Timeout - elapsed
		if left <= 0 || (r.MaxRetries > 0 && retries >= r.MaxRetries) {
			done(false)
			st := m.Inspect(held.Record)
			held.Status, held.Waited = &st, elapsed
			return nil, err
		}
		wait := min(bo.NextBackOff(), left)
		notify(WaitEvent{Holder: held.Record, Elapsed: elapsed, Left: left, RetryIn: wait, First: !waited})
		waited = true
		if err := sleep(ctx, wait); err != nil {
			done(false)
			return nil, err
		}
	}
}

// tryOnce writes the record, then enforces the hierarchy.
func (m *Manager) tryOnce(ctx context.Context, r Request, pk ParsedKey) (Record, error) {
	now := m.opts.Now()
	rec := Record{
		LockKey:       r.Key,
		LockID:        uuid.NewString(),
		LockedBy:      r.LockedBy,
		LockedAt:      now.Unix(),
		ExpiresAt:     now.Add(m.opts.TTL).Unix(),
		LastHeartbeat: now.Unix(),
		Metadata:      r.Metadata,
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
	// acquired is when the lease was taken, to the Manager clock's precision
	// (the record keeps whole seconds): lock.released's duration_seconds.
	acquired time.Time
}

func (m *Manager) startLease(parent context.Context, rec Record) *Lease {
	ctx, cancel := context.WithCancelCause(parent)
	l := &Lease{m: m, rec: rec, ctx: ctx, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{}), acquired: m.opts.Now()}
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
		ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), limit)
		err := l.m.b.Heartbeat(ctx, rec.LockKey, rec.LockID, now, exp)
		cancel()
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

// Keep stops the heartbeat and leaves the record in place, to expire at its
// expiresAt: nobody can take the key until then. The guard keeps its lock
// after stopping a shared resource so that a racing stop cannot run a
// second time (docs/guard.md). It writes lock.kept; Release after Keep does
// nothing.
func (l *Lease) Keep() {
	l.release.Do(func() {
		close(l.stop)
		<-l.done
		rec := l.Record()
		l.m.opts.Audit.Info("lock.kept", "lock_key", rec.LockKey, "lock_id", rec.LockID,
			"expires_at", rec.ExpiresAt)
		l.cancel(context.Canceled)
		l.m.held.Add(-1)
	})
}

// Release stops the heartbeat and deletes the record iff it is still ours;
// it writes lock.released with duration_seconds. ErrLockLost reports a lease
// that was lost (broken or taken over) before the release. Safe to call twice.
func (l *Lease) Release(ctx context.Context) error {
	l.release.Do(func() {
		close(l.stop)
		<-l.done
		rec := l.Record()
		l.relErr = l.m.b.Release(ctx, rec.LockKey, rec.LockID)
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

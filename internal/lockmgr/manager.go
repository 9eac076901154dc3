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
	// Position in the key's wait queue: 1 = next; 0 when not queued
	// (docs/locking.md, "Wait queue").
	Position int
	// Retrying is a passing backend failure (connection refused, a
	// failover answer, throttling) being waited out; Holder is then empty.
	// It is reported once per failure, not per try.
	Retrying error
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

// queue is the wait in the key's wait queue (docs/locking.md, "Wait queue"):
// try only when no live waiter with a conflicting key is ahead; otherwise
// register and wait, the head watching the holder, the others the waiter
// just ahead of them.
func (a *acquisition) queue(ctx context.Context) (Record, error) {
	free := false // the head saw the holder go: try at once
	for {
		var ahead []Record
		var err error
		if !free {
			ahead, err = a.ahead(ctx)
		}
		free = false
		if err == nil && len(ahead) == 0 {
			var rec Record
			rec, err = a.try(ctx)
			if err == nil {
				return rec, nil
			}
		}
		var held *HeldError
		if err != nil && !errors.As(err, &held) {
			if err := a.retry(ctx, err); err != nil {
				return Record{}, err
			}
			continue
		}
		left := a.r.Timeout - a.elapsed()
		if left <= 0 {
			return Record{}, a.giveUp(ctx, err)
		}
		if a.q == nil || a.q.key == "" {
			if err := a.register(ctx); err != nil {
				if err := a.retry(ctx, err); err != nil {
					return Record{}, err
				}
			}
			continue // look again, now with a ticket
		}
		if a.last.LockKey == "" {
			a.findHolder(ctx)
		}
		a.report(len(ahead)+1, left)
		if len(ahead) == 0 {
			free, err = a.watchHolder(ctx)
		} else {
			var gone bool
			gone, err = a.watchWaiter(ctx, ahead[len(ahead)-1])
			// The one waiter ahead left: this one is the head now, and
			// tries at once rather than reading the queue again.
			free = gone && len(ahead) == 1
		}
		if err != nil {
			if err := a.retry(ctx, err); err != nil {
				return Record{}, err
			}
		}
	}
}

// findHolder reads the live record in the way of a waiter that queued
// behind others without trying (best effort: the waiting line names it).
func (a *acquisition) findHolder(ctx context.Context) {
	prefix := a.r.Key
	if a.pk.Level != LevelCustom {
		prefix = StackKey(a.pk.Stack, a.pk.Env)
	}
	recs, err := a.m.b.List(ctx, prefix)
	if err != nil {
		return
	}
	now := a.m.opts.Now()
	for _, r := range recs {
		if !r.Expired(now) && Conflicts(a.r.Key, r.LockKey) {
			a.last = r
			return
		}
	}
}

// giveUp returns the held error for a wait that ran out of time: err when the
// last try gave one, else the key's current holder (or the last one seen).
func (a *acquisition) giveUp(ctx context.Context, err error) error {
	var held *HeldError
	if errors.As(err, &held) {
		return err
	}
	if rec, gerr := a.m.b.Get(ctx, a.last.LockKey); gerr == nil && a.last.LockKey != "" {
		a.last = rec
	}
	if a.last.LockKey == "" {
		if rec, gerr := a.m.b.Get(ctx, a.r.Key); gerr == nil {
			a.last = rec
		}
	}
	return &HeldError{Record: a.last}
}

// report tells OnWait about the wait: at once when the position or holder
// changed, else at most once a second.
func (a *acquisition) report(pos int, left time.Duration) {
	now := a.m.opts.Now()
	if a.waited && pos == a.lastPos && now.Sub(a.notified) < time.Second {
		return
	}
	a.notify(WaitEvent{Holder: a.last, Elapsed: now.Sub(a.start), Left: left, RetryIn: a.pollEvery(pos == 1), First: !a.waited, Position: pos})
	a.waited, a.lastPos, a.notified = true, pos, now
}

// watchHolder is the head's wait: poll the record in the way (one read) until
// it is released, expired or changed, or its release is announced. free
// says the holder went: the head then tries at once, without reading the
// queue again (no waiter can draw a ticket below its own).
func (a *acquisition) watchHolder(ctx context.Context) (free bool, err error) {
	var polled time.Time // when the last read began: reads start one interval apart
	for {
		wait := a.pollEvery(true)
		if !polled.IsZero() {
			wait = max(wait-time.Since(polled), 0)
		}
		released, err := a.pause(ctx, wait)
		if err != nil {
			return false, err
		}
		if a.last.LockKey == "" || released == a.last.LockKey {
			return true, nil
		}
		if err := a.renew(ctx); err != nil {
			return false, err
		}
		if a.elapsed() >= a.r.Timeout {
			return false, nil
		}
		polled = time.Now()
		rec, err := a.m.b.Get(ctx, a.last.LockKey)
		if errors.Is(err, ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if rec.LockID != a.last.LockID || rec.Expired(a.m.opts.Now()) {
			return true, nil
		}
		a.report(1, a.r.Timeout-a.elapsed())
	}
}

// watchWaiter is a follower's wait: poll the waiter just ahead (one read)
// until it leaves or expires (gone), or a release is announced; then the
// queue is read again.
func (a *acquisition) watchWaiter(ctx context.Context, prev Record) (gone bool, err error) {
	for {
		if _, err := a.pause(ctx, a.pollEvery(false)); err != nil {
			return false, err
		}
		if err := a.renew(ctx); err != nil {
			return false, err
		}
		if a.elapsed() >= a.r.Timeout || (a.q != nil && a.q.wake != nil) {
			return false, nil
		}
		rec, err := a.m.b.Get(ctx, prev.LockKey)
		if errors.Is(err, ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if rec.LockID != prev.LockID || rec.Expired(a.m.opts.Now()) {
			return true, nil
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

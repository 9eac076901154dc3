package lockmgr

import (
	"log/slog"
	"sync/atomic"
	"time"
)

// Defaults (docs/configuration.md#keys, docs/locking.md#lifetime).
const (
	DefaultTTL               = time.Hour
	DefaultHeartbeatInterval = 30 * time.Second
	DefaultStaleAfter        = 2 * time.Minute
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

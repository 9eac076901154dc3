package guard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Decision is what `guard stop` decided (docs/guard.md).
type Decision string

// Decisions.
const (
	Stopped             Decision = "stopped"               // every other sharer DOWN; the stop ran
	SkippedSharedActive Decision = "skipped_shared_active" // a sharer UP or UNKNOWN
	SkippedLock         Decision = "skipped_lock"          // the lock stayed held past the retries: fail safe
	DedicatedStopped    Decision = "dedicated_stopped"     // no other sharer; stopped without a lock
)

// Counter names (the project's metric scheme, "deployer.<area>.<what>"),
// reported in the guard.decision audit event and exported as metrics by the
// Observer (docs/guard.md#audit-events-and-counters).
const (
	CounterStopped             = "deployer.guard.stop.stopped"
	CounterSkippedSharedActive = "deployer.guard.stop.skipped_shared_active"
	CounterSkippedLock         = "deployer.guard.stop.skipped_lock"
	CounterDedicatedStopped    = "deployer.guard.stop.dedicated_stopped"
	CounterLockRetries         = "deployer.guard.lock.acquire.retries"
	CounterLockDurationMS      = "deployer.guard.lock.acquire.duration_ms"
)

// DecisionCounter is the counter of decision d (CounterStopped, ...), ""
// for an unknown decision.
func DecisionCounter(d Decision) string {
	switch d {
	case Stopped:
		return CounterStopped
	case SkippedSharedActive:
		return CounterSkippedSharedActive
	case SkippedLock:
		return CounterSkippedLock
	case DedicatedStopped:
		return CounterDedicatedStopped
	}
	return ""
}

// Observer receives every decision that was not a dry run, after its stop
// command (if any) ran; the metrics Recorder implements it
// (docs/observability.md#metrics).
type Observer interface {
	GuardDecided(r *Result)
}

// LockKey is the lock of shared resource name: "custom:guard-NAME" (break
// a stuck one with `deployer unlock --key guard-NAME --force`).
func LockKey(name string) string { return lockmgr.CustomKey("guard-" + name) }

// LockInfo describes the guard's lock in a Result.
type LockInfo struct {
	Key         string          `json:"key"`
	Acquired    bool            `json:"acquired"`
	LockID      string          `json:"lock_id,omitempty"`
	Fence       int64           `json:"fence,omitempty"`
	Retries     int             `json:"retries"`
	WaitSeconds float64         `json:"wait_seconds"`
	Holder      *lockmgr.Record `json:"holder,omitempty"` // who held it, when skipped
	Released    bool            `json:"released"`
	// KeptUntil is set after a stop: the lock stays until then (UTC).
	KeptUntil *time.Time `json:"kept_until,omitempty"`
}

// StopRun is the stop command's run.
type StopRun struct {
	Command         string  `json:"command"`
	ExitCode        int     `json:"exit_code"`
	Output          string  `json:"output"` // stdout and stderr, the last 64 KiB
	DurationSeconds float64 `json:"duration_seconds"`
}

// Result is the outcome of Stop, rendered by `guard stop` (human and --json).
type Result struct {
	Resource string         `json:"resource"`
	As       string         `json:"as"`
	Decision Decision       `json:"decision"`
	DryRun   bool           `json:"dry_run"`
	Sharers  []SharerStatus `json:"sharers"` // the other sharers, by name; empty for a dedicated resource
	Lock     *LockInfo      `json:"lock"`    // null for a dedicated resource
	Stop     *StopRun       `json:"stop,omitempty"`
}

// Active lists the sharers that kept the resource running (UP or UNKNOWN).
func (r *Result) Active() []string {
	var out []string
	for _, s := range r.Sharers {
		if s.Active() {
			out = append(out, s.App)
		}
	}
	return out
}

// StopError: the stop command failed (non-zero exit, or it could not start).
// The Result goes with it. Exit code 1.
type StopError struct {
	Resource string
	Run      StopRun
	Err      error
}

func (e *StopError) Error() string {
	out := strings.TrimSpace(e.Run.Output)
	if out != "" {
		out = "; its output ends:\n" + out
	}
	return fmt.Sprintf("the stop command of %s (%s) failed with exit code %d%s\n(the lock was released: fix the command and run guard stop again)",
		e.Resource, e.Run.Command, e.Run.ExitCode, out)
}

func (e *StopError) Unwrap() error { return e.Err }

// UnknownError: NAME is not under shared:, or APP is not one of its sharers.
type UnknownError struct{ Msg string }

func (e *UnknownError) Error() string { return e.Msg }

// Deps wire a Guard.
type Deps struct {
	// Locks opens the Manager of cfg's lock backend with cfg's lease
	// settings (Factory.Locks); it is called only when a lock is needed,
	// with the settings of LeaseConfig.
	Locks  func(ctx context.Context, cfg *config.Config) (*lockmgr.Manager, error)
	Client *http.Client // default NewClient()
	Dir    string       // where the stop command runs (the directory of deployer.yaml)
	Audit  *slog.Logger // guard.decision events; nil discards
	Now    func() time.Time
	Log    io.Writer // a line per step; nil discards
	Output io.Writer // the stop command's output as it runs; nil discards
	// Getenv names this process as a lock holder (lockmgr.Holder); nil
	// is os.Getenv.
	Getenv func(string) string
	// Environ is the environment the stop command starts from
	// (Factory.Environ), before the variables of the secrets key are
	// removed (proc.Environ) and DEPLOYER_GUARD_* added; default
	// os.Environ.
	Environ func() []string
	// Grace is the time between SIGTERM and SIGKILL when a running stop
	// command is cancelled (default 10s).
	Grace time.Duration
	// Observer counts the decisions (metrics); nil counts nothing.
	Observer Observer
}

// Guard decides and runs guarded stops.
type Guard struct {
	Deps
	client *http.Client
	now    func() time.Time
}

// New returns a Guard.
func New(d Deps) *Guard {
	g := &Guard{Deps: d, client: cmp.Or(d.Client, NewClient()), now: d.Now}
	if g.now == nil {
		g.now = time.Now
	}
	if g.Environ == nil {
		g.Environ = os.Environ
	}
	if g.Getenv == nil {
		g.Getenv = os.Getenv
	}
	g.Audit = cmp.Or(g.Audit, slog.New(slog.DiscardHandler))
	g.Log = cmp.Or(g.Log, io.Discard)
	g.Output = cmp.Or(g.Output, io.Discard)
	if g.Grace <= 0 {
		g.Grace = 10 * time.Second
	}
	return g
}

func (g *Guard) logf(format string, args ...any) {
	fmt.Fprintf(g.Log, "guard: "+format+"\n", args...)
}

// lookup finds the resource and checks that as shares it.
func lookup(cfg *config.Config, name, as string) (*config.Shared, error) {
	res, ok := cfg.Shared[name]
	if !ok {
		known := make([]string, 0, len(cfg.Shared))
		for n := range cfg.Shared {
			known = append(known, n)
		}
		sort.Strings(known)
		if len(known) == 0 {
			return nil, &UnknownError{Msg: fmt.Sprintf("%s has no shared: section, so %q is not a shared resource: add it under shared: (docs/guard.md)", orFile(cfg), name)}
		}
		return nil, &UnknownError{Msg: fmt.Sprintf("%q is not a shared resource in %s (known: %s): use one of those or add it under shared:", name, orFile(cfg), strings.Join(known, ", "))}
	}
	if as != "" {
		if _, ok := res.Sharers[as]; !ok {
			return nil, &UnknownError{Msg: fmt.Sprintf("%q is not a sharer of %s (sharers: %s): --as names the application being stopped, one of its sharers", as, name, strings.Join(appNames(res, ""), ", "))}
		}
	}
	return res, nil
}

func orFile(cfg *config.Config) string {
	if cfg.Path != "" {
		return cfg.Path
	}
	return "deployer.yaml"
}

// LeaseConfig returns a copy of cfg whose lock lease fits a guard's lock of
// ttl (the shared resource's lock_ttl): the lease lasts ttl, the heartbeat
// runs at most every ttl/3, and the lock is called stale no sooner than ttl
// after its last heartbeat (docs/guard.md).
func LeaseConfig(cfg *config.Config, ttl time.Duration) *config.Config {
	c := *cfg
	c.Backend.LockTTL = ttl
	c.Backend.HeartbeatInterval = min(c.Backend.HeartbeatInterval, ttl/3)
	c.Backend.StaleAfter = max(c.Backend.StaleAfter, ttl)
	return &c
}

// Status returns the quick status of every sharer of name, checked
// concurrently without a lock.
func (g *Guard) Status(ctx context.Context, cfg *config.Config, name string) ([]SharerStatus, error) {
	res, err := lookup(cfg, name, "")
	if err != nil {
		return nil, err
	}
	return g.checkAll(ctx, res, appNames(res, ""))
}

// Stop applies the guard's rules to shared resource name for application as
// (being stopped, so left out of the checks). With dryRun it takes no lock
// and runs nothing: the Result says what would be decided (a live lock
// record means skipped_lock). Errors: *UnknownError for a bad name or app;
// *StopError (with the Result) when the stop command fails; ctx's error
// when cancelled before a decision (the stop is then never started and the
// lock is released); a lock backend error.
func (g *Guard) Stop(ctx context.Context, cfg *config.Config, name, as string, dryRun bool) (*Result, error) {
	res, err := lookup(cfg, name, as)
	if err != nil {
		return nil, err
	}
	r := &Result{Resource: name, As: as, DryRun: dryRun, Sharers: []SharerStatus{}}
	others := appNames(res, as)
	if len(others) == 0 {
		g.logf("%s is dedicated to %s: stopping it without a lock", name, as)
		r.Decision = DedicatedStopped
		return g.finish(ctx, r, res)
	}
	g.logf("%s is shared with %d other application(s): %s", name, len(others), strings.Join(others, ", "))
	m, err := g.Locks(ctx, LeaseConfig(cfg, res.LockTTL))
	if err != nil {
		return nil, err
	}
	if dryRun {
		return g.dryRun(ctx, r, res, m, others)
	}
	lease, err := g.acquire(ctx, r, res, m, name, as)
	if err != nil || lease == nil {
		return r, err
	}
	keep := false
	defer func() {
		if keep {
			lease.Keep()
			until := time.Unix(lease.Record().ExpiresAt, 0).UTC()
			r.Lock.KeptUntil = &until
			g.logf("lock %s kept until %s, so a racing stop cannot run again", r.Lock.Key, until.Format(time.RFC3339))
			return
		}
		if err := lease.ReleaseBounded(); err != nil {
			g.logf("lock %s not released: %v", r.Lock.Key, err)
			return
		}
		r.Lock.Released = true
		g.logf("lock %s released (lock id %s)", r.Lock.Key, r.Lock.LockID)
	}()
	// Checks run under the lease: a lost lease or Ctrl-C ends them.
	r.Sharers, err = g.checkAll(lease.Context(), res, others)
	if err != nil {
		if lease.Lost() != nil {
			return r, fmt.Errorf("lock %s was lost during the status checks; the stop was not run: %w", r.Lock.Key, lockmgr.ErrLockLost)
		}
		return r, err
	}
	if active := r.Active(); len(active) > 0 {
		g.logf("%s is shared with active applications: %s. Skipping the stop.", name, strings.Join(active, ", "))
		r.Decision = SkippedSharedActive
		return g.finish(ctx, r, res)
	}
	if lease.Lost() != nil {
		return r, fmt.Errorf("lock %s was lost before the stop; the stop was not run: %w", r.Lock.Key, lockmgr.ErrLockLost)
	}
	g.logf("all sharing applications are DOWN: stopping %s", name)
	r.Decision = Stopped
	// Once started, the stop runs to its end unless cancelled (Ctrl-C).
	r, err = g.finish(ctx, r, res)
	keep = err == nil
	return r, err
}

// acquire takes the resource's lock with at most res.MaxRetries retries;
// a lock still held then gives a SkippedLock result and a nil lease.
func (g *Guard) acquire(ctx context.Context, r *Result, res *config.Shared, m *lockmgr.Manager, name, as string) (*lockmgr.Holding, error) {
	r.Lock = &LockInfo{Key: LockKey(name)}
	start := g.now()
	// Timeout: the retries are what bounds the wait; the TTL caps it.
	req := lockmgr.LeaseRequest{Key: r.Lock.Key, Op: lockmgr.OpGuard, Getenv: g.Getenv,
		Command: fmt.Sprintf("guard stop %s --as %s", name, as), Timeout: res.LockTTL, MaxRetries: res.MaxRetries,
		OnWait: func(ev lockmgr.WaitEvent) {
			if ev.Done || ev.Retrying != nil {
				return
			}
			h := ev.Holder
			r.Lock.Retries++
			g.logf("lock %s held by %s (%s), retrying in %s (%d of %d)", h.LockKey, h.LockedBy, h.Metadata.Operation, ev.RetryIn.Round(time.Millisecond), r.Lock.Retries, res.MaxRetries)
		}}
	if res.MaxRetries == 0 {
		req.Timeout = 0
	}
	lease, err := m.Take(ctx, req)
	r.Lock.WaitSeconds = g.now().Sub(start).Seconds()
	var held *lockmgr.HeldError
	if errors.As(err, &held) {
		h := held.Record
		r.Lock.Holder = &h
		r.Decision = SkippedLock
		g.logf("lock %s not acquired after %d retries (held by %s since %s): skipping the stop (fail safe)",
			r.Lock.Key, r.Lock.Retries, h.LockedBy, time.Unix(h.LockedAt, 0).UTC().Format(time.RFC3339))
		_, err := g.finish(ctx, r, res)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	rec := lease.Record()
	r.Lock.Acquired, r.Lock.LockID, r.Lock.Fence = true, rec.LockID, rec.Fence
	g.logf("lock %s acquired (lock id %s, fence %d)", rec.LockKey, rec.LockID, rec.Fence)
	return lease, nil
}

// dryRun decides without a lock and without running anything.
func (g *Guard) dryRun(ctx context.Context, r *Result, res *config.Shared, m *lockmgr.Manager, others []string) (*Result, error) {
	r.Lock = &LockInfo{Key: LockKey(r.Resource)}
	st, err := m.Get(ctx, r.Lock.Key)
	rec := st.Record
	switch {
	case err == nil && !rec.Expired(g.now()):
		r.Lock.Holder = &rec
		r.Decision = SkippedLock
		g.logf("lock %s is held by %s: guard stop would skip (dry run)", r.Lock.Key, rec.LockedBy)
		return r, nil
	case err != nil && !errors.Is(err, lockmgr.ErrNotFound):
		return nil, err
	}
	if r.Sharers, err = g.checkAll(ctx, res, others); err != nil {
		return nil, err
	}
	r.Decision = Stopped
	if len(r.Active()) > 0 {
		r.Decision = SkippedSharedActive
	}
	g.logf("dry run: guard stop would decide %s", r.Decision)
	return r, nil
}

// finish runs the stop when the decision says so (not in a dry run) and
// writes the guard.decision audit event.
func (g *Guard) finish(ctx context.Context, r *Result, res *config.Shared) (*Result, error) {
	var err error
	if !r.DryRun && (r.Decision == Stopped || r.Decision == DedicatedStopped) {
		if cerr := ctx.Err(); cerr != nil {
			g.logf("cancelled before the stop: %s was not stopped", r.Resource)
			return r, context.Cause(ctx)
		}
		var run StopRun
		run, err = g.runStop(ctx, res.Stop, r.Resource, r.As)
		r.Stop = &run
		if err != nil {
			err = &StopError{Resource: r.Resource, Run: run, Err: err}
		}
	}
	g.audit(r, err)
	return r, err
}

func (g *Guard) audit(r *Result, err error) {
	counters := map[string]any{}
	if !r.DryRun {
		if c := DecisionCounter(r.Decision); c != "" {
			counters[c] = 1
		}
		if g.Observer != nil {
			g.Observer.GuardDecided(r)
		}
		if r.Lock != nil {
			counters[CounterLockRetries] = r.Lock.Retries
			counters[CounterLockDurationMS] = int64(r.Lock.WaitSeconds * 1000)
		}
	}
	attrs := []any{"resource", r.Resource, "as", r.As, "decision", string(r.Decision), "dry_run", r.DryRun,
		"sharers", r.Sharers, "counters", counters}
	if r.Lock != nil {
		attrs = append(attrs, "lock_key", r.Lock.Key, "lock_id", r.Lock.LockID, "lock_retries", r.Lock.Retries)
	}
	if r.Stop != nil {
		attrs = append(attrs, "stop_command", r.Stop.Command, "stop_exit_code", r.Stop.ExitCode)
	}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
		g.Audit.Warn("guard.decision", attrs...)
		return
	}
	g.Audit.Info("guard.decision", attrs...)
}

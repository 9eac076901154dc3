package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deployer-dev/deployer/internal/audit"
	"github.com/deployer-dev/deployer/internal/backends"
	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engines"
	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/metrics"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Factory builds what commands need, lazily, from the global flags
// (GitHub CLI's cmdutil.Factory).
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	// Environ is the process environment Command components start from
	// (ComponentEnviron); nil is none.
	Environ func() []string
	// Now is the clock of the use cases, lock verdicts and metrics; nil
	// leaves each package below its own (the system clock). Tests set a fixed one.
	Now func() time.Time

	// Global flags.
	ConfigPath string
	AuditPath  string
	JSON       bool
	NoColor    bool
	Verbose    bool

	// NewEngines builds the engines of a run: by default every engine of
	// the registry (internal/engines); tests give their own. Nil means none.
	NewEngines func(cfg *config.Config, opts EngineOptions) []engine.Engine

	cfg      *config.Config
	masker   *secrets.Masker
	rawOut   io.Writer // stdout before masking: state show --show-secrets
	audit    *slog.Logger
	mu       sync.Mutex // guards closers, running, perStack and managers
	closers  []io.Closer
	running  []engine.Engine
	perStack []engine.Engine // the engines of each stack of a --all run
	managers []*lockmgr.Manager
	errMu    sync.Mutex   // one progress line at a time from concurrent stacks
	stacking atomic.Int32 // > 0 while a --all run has stacks to finish and report

	gh      *GitHubReporter // guarded by mu
	metrics *metrics.Recorder
	groups  *ghactions.GroupWriter
}

// NewFactory returns a Factory on the process's streams and environment.
// Everything written to io.Out and io.ErrOut goes through the Masker: a
// secret value that becomes known (from deployer.yaml or opened state) is
// printed as *** (docs/secrets.md).
func NewFactory(io *IOStreams) *Factory {
	f := &Factory{IO: io, Getenv: os.Getenv, Environ: os.Environ}
	f.NewEngines = f.registryEngines
	f.maskStreams()
	return f
}

// Masker returns the process's Masker of secret values. Under GitHub Actions
// (GITHUB_ACTIONS=true) it announces each value with ::add-mask:: on stderr.
func (f *Factory) Masker() *secrets.Masker {
	if f.masker == nil {
		f.masker = secrets.NewMasker()
		if f.Getenv != nil && f.Getenv("GITHUB_ACTIONS") == "true" && f.IO != nil {
			f.masker.AnnounceTo(f.IO.ErrOut)
		}
	}
	return f.masker
}

// maskStreams routes IO.Out and IO.ErrOut through the Masker (once).
func (f *Factory) maskStreams() {
	if f.rawOut != nil || f.IO == nil {
		return
	}
	m := f.Masker()
	f.rawOut = f.IO.Out
	f.IO.Out, f.IO.ErrOut = m.Writer(f.IO.Out), m.Writer(f.IO.ErrOut)
}

// ComponentEnviron is the environment Command components start from:
// deployer's own (Environ), without the variables of the state's secrets
// key (secrets.ChildEnviron, docs/secrets.md).
func (f *Factory) ComponentEnviron() []string {
	if f.Environ == nil {
		return []string{}
	}
	return secrets.ChildEnviron(f.Environ())
}

// registryEngines builds every engine of the registry for a run on cfg.
func (f *Factory) registryEngines(cfg *config.Config, opts EngineOptions) []engine.Engine {
	state := cfg.Backend.State
	if strings.HasPrefix(state, "file://") {
		if dir, err := backends.FileDir(state, cfg.Dir); err == nil {
			state = "file://" + dir
		}
	}
	return engines.New(engines.Options{StateURL: state, SecretsProvider: cfg.Pulumi.SecretsProvider, PulumiCommand: cfg.Pulumi.Command,
		InstallPulumi: opts.InstallPulumi, Environ: f.ComponentEnviron})
}

// configOptions check deployer.yaml against the registries: the backend
// URL schemes and the engines' kinds.
func configOptions() []config.Option {
	return []config.Option{config.WithBackends(backends.Schemes()), config.WithKinds(engines.Kinds())}
}

// Sealer returns the Sealer of deployer.yaml's secrets provider
// (pulumi.secrets_provider, shared with the Pulumi engine).
func (f *Factory) Sealer(cfg *config.Config) (*secrets.Sealer, error) {
	for _, k := range []string{"DEPLOYER_SECRETS_PASSPHRASE", secrets.NewPassphraseVar, "PULUMI_CONFIG_PASSPHRASE"} {
		f.Masker().Add(f.Getenv(k)) // never printed either
	}
	p, err := secrets.NewProvider(cfg.Pulumi.SecretsProvider, f.Getenv)
	if err != nil {
		return nil, err
	}
	return secrets.NewSealer(p, f.Masker()), nil
}

// Config loads deployer.yaml (--config) and applies DEPLOYER_* variables.
func (f *Factory) Config() (*config.Config, error) {
	if f.cfg != nil {
		return f.cfg, nil
	}
	path := f.ConfigPath
	if path == "" {
		path = "deployer.yaml"
	}
	cfg, err := f.StackConfig(path)
	if err != nil {
		return nil, err
	}
	f.cfg = cfg
	return cfg, nil
}

// Audit returns the audit logger (--audit-log FILE, else discard).
func (f *Factory) Audit() (*slog.Logger, error) {
	if f.audit != nil {
		return f.audit, nil
	}
	l, c, err := audit.OpenMasked(f.AuditPath, f.Masker().Writer)
	if err != nil {
		return nil, err
	}
	f.audit = l
	f.addCloser(c)
	return l, nil
}

// backendOptions are the registry's options for cfg; writes says the
// command will write (backends.Options.Writes).
func (f *Factory) backendOptions(cfg *config.Config, writes bool) backends.Options {
	return backends.Options{BaseDir: cfg.Dir, SSE: cfg.Backend.SSE, KMSKeyID: cfg.Backend.KMSKeyID, PathStyle: cfg.Backend.PathStyle,
		LockURL: cfg.Backend.Lock, Writes: writes}
}

// Locks opens the lock backend for a command that takes locks and returns
// its Manager: a backend that checks its server before writing does it now
// (the S3 conditional-write probe). With `lock: none` it prints the one-line
// warning of docs/self-hosted.md#locking-off-lock-none on stderr.
func (f *Factory) Locks(ctx context.Context, cfg *config.Config) (*lockmgr.Manager, error) {
	return f.locks(ctx, cfg, true)
}

// ReadLocks opens the lock backend like Locks for a command that only
// reads locks (state locks): it sends no write request
// (docs/design.md#read-only-commands).
func (f *Factory) ReadLocks(ctx context.Context, cfg *config.Config) (*lockmgr.Manager, error) {
	return f.locks(ctx, cfg, false)
}

func (f *Factory) locks(ctx context.Context, cfg *config.Config, writes bool) (*lockmgr.Manager, error) {
	b, err := backends.OpenLock(ctx, cfg.Backend.Lock, f.backendOptions(cfg, writes))
	if err != nil {
		return nil, err
	}
	f.addCloser(closerFunc(b.Close))
	if w := backends.LockWarning(cfg.Backend.Lock); w != "" {
		fmt.Fprintln(f.IO.ErrOut, w)
	}
	al, err := f.Audit()
	if err != nil {
		return nil, err
	}
	m := lockmgr.NewManager(b, lockmgr.Options{
		TTL: cfg.Backend.LockTTL, HeartbeatInterval: cfg.Backend.HeartbeatInterval, StaleAfter: cfg.Backend.StaleAfter,
		MaxClockSkew: cfg.Backend.MaxClockSkew, Now: f.Now, Audit: al, Observer: f.Metrics(ctx, cfg),
		OnWait: f.onLockWait(),
	})
	f.mu.Lock()
	f.managers = append(f.managers, m)
	f.mu.Unlock()
	return m, nil
}

// onLockWait reports waits for a held lock on stderr (waitReporter:
// docs/locking.md#waiting-for-a-lock) and, in GitHub Actions, as one notice
// per run (GitHub shows at most 10 per step).
func (f *Factory) onLockWait() func(lockmgr.WaitEvent) {
	rep := newWaitReporter(f.IO.ErrOut, f.IO.ErrTTY())
	return func(ev lockmgr.WaitEvent) {
		if gh := f.Reporter(); !ev.Done && ev.Retrying == nil && gh.Env().Actions && gh.first(&gh.noticedWait) {
			h := ev.Holder
			f.Reporter().annotate(ghactions.Notice, "Waiting for lock "+h.LockKey,
				fmt.Sprintf("waiting for lock %s held by %s (%s, pid %d, since %s)", h.LockKey, h.LockedBy,
					orDash(h.Metadata.Operation), h.Metadata.PID, time.Unix(h.LockedAt, 0).UTC().Format(time.RFC3339)))
		}
		rep.event(ev)
	}
}

// HoldsLeases reports whether a lock taken by this process is still held:
// until it is released, a cancelled command must not exit early.
func (f *Factory) HoldsLeases() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.managers {
		if m.Held() > 0 {
			return true
		}
	}
	return false
}

// Stacking reports whether a plan, deploy or destroy --all is still
// running stacks or reporting them: a cancelled run stops starting stacks,
// lets the running ones save and release, then prints its results, which a
// signal must not cut short.
func (f *Factory) Stacking() bool { return f.stacking.Load() > 0 }

// Store opens the state backend for a command that writes state: a backend
// that checks its server before writing does it now (the S3
// conditional-write probe). Its Store seals secret values on write and
// opens them on read with deployer.yaml's secrets provider.
func (f *Factory) Store(ctx context.Context, cfg *config.Config) (*statestore.Store, error) {
	return f.sealedStore(ctx, cfg, true)
}

// ReadStore opens the state backend like Store for a command that only
// reads state (plan, state show --show-secrets): it sends no write request
// (docs/design.md#read-only-commands).
func (f *Factory) ReadStore(ctx context.Context, cfg *config.Config) (*statestore.Store, error) {
	return f.sealedStore(ctx, cfg, false)
}

func (f *Factory) sealedStore(ctx context.Context, cfg *config.Config, writes bool) (*statestore.Store, error) {
	sealer, err := f.Sealer(cfg)
	if err != nil {
		return nil, err
	}
	return f.openStore(ctx, cfg, writes, statestore.WithSealer(sealer))
}

// SealedStore opens the state backend without a Sealer, for reading:
// secrets stay as stored (sealed), so no key is needed (state show,
// history), and no write request is sent.
func (f *Factory) SealedStore(ctx context.Context, cfg *config.Config) (*statestore.Store, error) {
	return f.openStore(ctx, cfg, false)
}

func (f *Factory) openStore(ctx context.Context, cfg *config.Config, writes bool, opts ...statestore.Option) (*statestore.Store, error) {
	b, err := backends.OpenState(ctx, cfg.Backend.State, f.backendOptions(cfg, writes))
	if err != nil {
		return nil, err
	}
	f.addCloser(closerFunc(b.Close))
	f.warnFileStateInCI(cfg)
	opts = append([]statestore.Option{statestore.WithMaxDocumentBytes(cfg.Backend.MaxStateSize)}, opts...)
	return statestore.New(b, opts...), nil
}

// Service wires the deploy use case.
func (f *Factory) Service(ctx context.Context, cfg *config.Config, opts EngineOptions) (*deploy.Service, error) {
	return f.service(ctx, cfg, opts, true)
}

// PlanService wires the use cases that take no lock and write no state
// (plan): the lock backend is not opened, so a plan works while it is
// unreachable, and the state backend is opened for reading only.
func (f *Factory) PlanService(ctx context.Context, cfg *config.Config, opts EngineOptions) (*deploy.Service, error) {
	return f.service(ctx, cfg, opts, false)
}

func (f *Factory) service(ctx context.Context, cfg *config.Config, opts EngineOptions, withLocks bool) (*deploy.Service, error) {
	return f.newService(ctx, cfg, withLocks, f.engines(cfg, opts), f.progress())
}

// StackService wires the use case for one stack of a plan, deploy or
// destroy --all: the stack's own backends and engines, its progress lines
// on stderr marked "[stack] " (docs/many-stacks.md#output).
func (f *Factory) StackService(ctx context.Context, cfg *config.Config, opts EngineOptions, withLocks bool) (*deploy.Service, error) {
	var engines []engine.Engine
	if f.NewEngines != nil {
		engines = f.NewEngines(cfg, opts)
	}
	f.mu.Lock()
	f.perStack = append(f.perStack, engines...)
	f.mu.Unlock()
	return f.newService(ctx, cfg, withLocks, engines, &prefixWriter{mu: &f.errMu, w: f.IO.ErrOut, prefix: "[" + cfg.Stack + "] "})
}

// loadOptions are the options of every deployer.yaml load: the backend
// registry's schemes and DEPLOYER_MAX_CONFIG_VALUES (an invalid value is
// reported by config's own variable checks and the default applies here).
func (f *Factory) loadOptions() []config.Option {
	n, _ := config.ParseMaxValues(f.Getenv(config.MaxValuesVar))
	return append(configOptions(), config.WithMaxValues(n))
}

// StackConfig loads the deployer.yaml of one stack of a --all run (at
// path) with the DEPLOYER_* layer, as Config does for --config.
func (f *Factory) StackConfig(path string) (*config.Config, error) {
	cfg, err := config.Load(path, f.loadOptions()...)
	if err != nil {
		return nil, err
	}
	if err := config.ApplyEnv(cfg, f.Getenv, configOptions()...); err != nil {
		return nil, err
	}
	return cfg, nil
}

// newService wires a deploy.Service; its backends are opened by the use
// case, after the engines' preflight (deploy.Deps.Open).
func (f *Factory) newService(ctx context.Context, cfg *config.Config, withLocks bool, engines []engine.Engine, progress io.Writer) (*deploy.Service, error) {
	al, err := f.Audit()
	if err != nil {
		return nil, err
	}
	open := func(ctx context.Context) (*lockmgr.Manager, *statestore.Store, error) {
		var locks *lockmgr.Manager
		if withLocks {
			var err error
			if locks, err = f.Locks(ctx, cfg); err != nil {
				return nil, nil, err
			}
		}
		open := f.ReadStore
		if withLocks {
			open = f.Store
		}
		store, err := open(ctx, cfg)
		if err != nil {
			return nil, nil, err
		}
		if f.Verbose {
			fmt.Fprintf(f.IO.ErrOut, "config %s; state %s; lock %s (ttl %s, heartbeat %s, stale after %s)\n",
				cfg.Path, backendurl.Redact(cfg.Backend.State), backendurl.Redact(cfg.Backend.Lock), cfg.Backend.LockTTL, cfg.Backend.HeartbeatInterval, cfg.Backend.StaleAfter)
		}
		return locks, store, nil
	}
	return deploy.New(deploy.Deps{
		Open: open, Engines: engines,
		Audit: al, Now: f.Now, Progress: progress, Getenv: f.Getenv, Observer: f.Metrics(ctx, cfg), Masker: f.Masker(),
		Version: BuildVersion().Identity(),
	}), nil
}

// EngineOptions are engine flags of deploy/destroy/plan.
type EngineOptions struct {
	InstallPulumi bool
}

// engines returns the engines of this run, built once (NewEngines).
func (f *Factory) engines(cfg *config.Config, opts EngineOptions) []engine.Engine {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running == nil && f.NewEngines != nil {
		f.running = f.NewEngines(cfg, opts)
	}
	return f.running
}

// KillEngines stops every engine process at once (the second Ctrl-C).
func (f *Factory) KillEngines() {
	f.mu.Lock()
	running := append(slices.Clone(f.running), f.perStack...)
	f.mu.Unlock()
	for _, e := range running {
		e.Kill()
	}
}

// progress is where engines stream component output: stderr, with each
// component's lines in a log group under GitHub Actions.
func (f *Factory) progress() io.Writer {
	if !f.GitHub().Actions {
		return f.IO.ErrOut
	}
	if f.groups == nil {
		f.groups = ghactions.NewGroupWriter(f.IO.ErrOut)
	}
	return f.groups
}

// Metrics returns the process's metrics recorder (docs/observability.md):
// OTLP when OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT is set, EMF lines to
// metrics.emf / DEPLOYER_METRICS_EMF. A setup problem is a warning: metrics
// never stop a deploy.
func (f *Factory) Metrics(ctx context.Context, cfg *config.Config) *metrics.Recorder {
	if f.metrics != nil {
		return f.metrics
	}
	emf := ""
	if cfg != nil {
		emf = cfg.Metrics.EMF
	}
	r, err := metrics.New(ctx, metrics.Options{Getenv: f.Getenv, EMFPath: emf, Version: Version, Now: f.Now})
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "Warning: metrics: %v; continuing without them\n", err)
	}
	f.metrics = r
	return r
}

// Close ends the open log group, flushes metrics (waiting at most
// metrics.ShutdownTimeout for an OTLP collector), and closes backends and
// the audit log.
func (f *Factory) Close() {
	if f.groups != nil {
		_ = f.groups.Close()
	}
	if f.metrics != nil {
		if err := f.metrics.Shutdown(context.Background()); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "Warning: metrics: %v\n", err)
		}
		f.metrics = nil
	}
	f.mu.Lock()
	closers := f.closers
	f.closers = nil
	f.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		_ = closers[i].Close()
	}
}

// addCloser keeps c to close in Close; stacks of a --all run open their
// backends concurrently.
func (f *Factory) addCloser(c io.Closer) {
	f.mu.Lock()
	f.closers = append(f.closers, c)
	f.mu.Unlock()
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// prefixWriter writes each line with a prefix, whole, under mu (shared by
// the stacks of a run); a partial line waits for its end.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	part   []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		_, _ = io.WriteString(p.w, p.prefix+string(p.part[:i+1]))
		p.part = p.part[i+1:]
	}
}

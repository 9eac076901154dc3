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

// Factory is what the commands are built from, as GitHub CLI's
// cmdutil.Factory: the process's streams, environment and global flags,
// the two reporters every command shares (the Masker and the
// ghactions.Reporter), and lazy constructors. A constructor builds its value on
// its first call and hands the same one out after (deployer.yaml, the audit
// log, the metrics recorder); the backends it opens are closed by Close. A
// command takes the values and constructors it needs into its options when
// it is built; tests replace any of them. The Factory keeps no per-run
// state: what the constructors opened is held by the session NewFactory
// made (see session).
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	// Environ is the process environment Command components start from
	// (nil is none), and lock exec and guard stop commands (nil is
	// os.Environ).
	Environ func() []string
	// Now is the clock of the use cases, lock verdicts and metrics; nil
	// leaves each package below its own (the system clock). Tests set a fixed one.
	Now func() time.Time

	// Global flags, set by the root command before a command runs.
	ConfigPath string
	AuditPath  string
	JSON       bool
	NoColor    bool
	Verbose    bool

	// Masker hides every known secret value in IO.Out and IO.ErrOut as ***
	// (docs/secrets.md); under GitHub Actions it announces each value with
	// ::add-mask::.
	Masker *secrets.Masker
	// RawOut is stdout before masking (state show --show-secrets).
	RawOut io.Writer
	// GitHub reports a run under GitHub Actions (job summary, outputs,
	// annotations); outside Actions it writes nothing. Commands take it in
	// their options.
	GitHub *ghactions.Reporter

	// NewEngines builds the engines of a run: by default every engine of
	// the registry (internal/engines); tests give their own. Nil means none.
	NewEngines func(cfg *config.Config, opts EngineOptions) []engine.Engine

	// Config loads deployer.yaml (--config) with the DEPLOYER_* layer, once;
	// StackConfig loads the deployer.yaml of one stack of a --all run.
	Config      func() (*config.Config, error)
	StackConfig func(path string) (*config.Config, error)
	// Audit is the audit logger (--audit-log FILE, else discard).
	Audit func() (*slog.Logger, error)
	// Metrics is the process's metrics recorder (docs/observability.md):
	// OTLP when OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT is set, EMF lines to
	// metrics.emf / DEPLOYER_METRICS_EMF. A setup problem is a warning:
	// metrics never stop a deploy.
	Metrics func(ctx context.Context, cfg *config.Config) *metrics.Recorder
	// Sealer is the Sealer of deployer.yaml's secrets provider
	// (pulumi.secrets_provider, shared with the Pulumi engine).
	Sealer func(cfg *config.Config) (*secrets.Sealer, error)
	// Locks opens the lock backend for a command that takes locks: a
	// backend that checks its server before writing does it now (the S3
	// conditional-write probe); with `lock: none` it prints the warning of
	// docs/self-hosted.md#locking-off-lock-none. ReadLocks opens it for a
	// command that only reads locks: no write request
	// (docs/design.md#read-only-commands).
	Locks, ReadLocks func(ctx context.Context, cfg *config.Config) (*lockmgr.Manager, error)
	// Store opens the state backend for a command that writes state, its
	// secrets sealed on write and opened on read; ReadStore the same for a
	// command that only reads (no write request); SealedStore without a
	// Sealer, for reading with secrets left sealed (state show, history).
	Store, ReadStore, SealedStore func(ctx context.Context, cfg *config.Config) (*statestore.Store, error)
	// Service wires the use cases on cfg; the use case opens the lock and
	// state backends after the engines' preflight. PlanService wires the
	// ones that take no lock and write no state (plan): the lock backend is
	// never opened and the state backend is read only.
	Service, PlanService func(ctx context.Context, cfg *config.Config, opts EngineOptions) (*deploy.Service, error)
	// StackService wires the use case for one stack of a plan, deploy or
	// destroy --all: its own backends and engines, its progress lines on
	// stderr marked "[stack] " (docs/many-stacks.md#output).
	StackService func(ctx context.Context, cfg *config.Config, opts EngineOptions, withLocks bool) (*deploy.Service, error)

	// HoldsLeases reports whether a lock taken by this process is still
	// held: until it is released, a cancelled command must not exit early.
	HoldsLeases func() bool
	// Stacking reports whether a plan, deploy or destroy --all is still
	// running or reporting its stacks, which a signal must not cut short.
	Stacking func() bool
	// KillEngines stops every engine process at once (the second Ctrl-C).
	KillEngines func()
	// Close ends the open log group, flushes metrics (waiting at most
	// metrics.ShutdownTimeout for an OTLP collector) and closes the backends
	// and the audit log.
	Close func()

	// track counts a --all run in Stacking until the returned func is called.
	track func() (done func())
}

// NewFactory returns a Factory on the process's streams and environment.
// Everything written to io.Out and io.ErrOut goes through the Masker: a
// secret value that becomes known (from deployer.yaml or opened state) is
// printed as *** (docs/secrets.md).
func NewFactory(io *IOStreams) *Factory {
	f := &Factory{IO: io, Getenv: os.Getenv, Environ: os.Environ}
	f.Masker = secrets.NewMasker()
	if io != nil {
		if f.Getenv("GITHUB_ACTIONS") == "true" {
			f.Masker.AnnounceTo(io.ErrOut)
		}
		f.RawOut = io.Out
		io.Out, io.ErrOut = f.Masker.Writer(io.Out), f.Masker.Writer(io.ErrOut)
		// The environment is read when first reported: tests set Getenv after.
		f.GitHub = ghactions.NewReporter(func(k string) string { return f.Getenv(k) }, io.ErrOut, f.Masker,
			ghactions.Hints{Remedy: Remedy, UnlockCommand: unlockCommand})
	}
	s := &session{f: f}
	f.NewEngines = s.registryEngines
	f.Config, f.StackConfig, f.Audit, f.Metrics, f.Sealer = s.config, s.stackConfig, s.audit, s.metrics, s.sealer
	f.Locks = func(ctx context.Context, cfg *config.Config) (*lockmgr.Manager, error) {
		return s.locks(ctx, cfg, true)
	}
	f.ReadLocks = func(ctx context.Context, cfg *config.Config) (*lockmgr.Manager, error) {
		return s.locks(ctx, cfg, false)
	}
	f.Store = func(ctx context.Context, cfg *config.Config) (*statestore.Store, error) {
		return s.sealedStore(ctx, cfg, true)
	}
	f.ReadStore = func(ctx context.Context, cfg *config.Config) (*statestore.Store, error) {
		return s.sealedStore(ctx, cfg, false)
	}
	f.SealedStore = func(ctx context.Context, cfg *config.Config) (*statestore.Store, error) {
		return s.openStore(ctx, cfg, false)
	}
	f.Service = func(ctx context.Context, cfg *config.Config, opts EngineOptions) (*deploy.Service, error) {
		return s.newService(ctx, cfg, true, s.engines(cfg, opts), s.progress())
	}
	f.PlanService = func(ctx context.Context, cfg *config.Config, opts EngineOptions) (*deploy.Service, error) {
		return s.newService(ctx, cfg, false, s.engines(cfg, opts), s.progress())
	}
	f.StackService = s.stackService
	f.HoldsLeases, f.Stacking, f.KillEngines, f.Close, f.track = s.holdsLeases, s.stacking, s.killEngines, s.close, s.track
	return f
}

// EngineOptions are engine flags of deploy/destroy/plan.
type EngineOptions struct {
	InstallPulumi bool
}

// configOptions check deployer.yaml against the registries: the backend
// URL schemes and the engines' kinds.
func configOptions() []config.Option {
	return []config.Option{config.WithBackends(backends.Schemes()), config.WithKinds(engines.Kinds())}
}

// session is what the Factory's constructors built and opened in this
// process: the loaded deployer.yaml, the audit log, the metrics recorder,
// the backends (closed by close), the lock managers and engines the
// signal handling reads. It reads the Factory's fields (Getenv, the global
// flags) when a constructor is called, not when it was made.
type session struct {
	f *Factory

	mu       sync.Mutex // guards the fields below; stacks of a --all run open backends concurrently
	cfg      *config.Config
	auditLog *slog.Logger
	recorder *metrics.Recorder
	groups   *ghactions.GroupWriter
	closers  []io.Closer
	running  []engine.Engine
	perStack []engine.Engine // the engines of each stack of a --all run
	managers []*lockmgr.Manager

	errMu    sync.Mutex   // one progress line at a time from concurrent stacks
	stackRun atomic.Int32 // > 0 while a --all run has stacks to finish and report
}

// componentEnviron is the environment Command components start from:
// deployer's own (Factory.Environ), without the variables of the state's
// secrets key (secrets.ChildEnviron, docs/secrets.md).
func (s *session) componentEnviron() []string {
	if s.f.Environ == nil {
		return []string{}
	}
	return secrets.ChildEnviron(s.f.Environ())
}

// registryEngines builds every engine of the registry for a run on cfg.
func (s *session) registryEngines(cfg *config.Config, opts EngineOptions) []engine.Engine {
	state := cfg.Backend.State
	if strings.HasPrefix(state, "file://") {
		if dir, err := backends.FileDir(state, cfg.Dir); err == nil {
			state = "file://" + dir
		}
	}
	return engines.New(engines.Options{StateURL: state, SecretsProvider: cfg.Pulumi.SecretsProvider, PulumiCommand: cfg.Pulumi.Command,
		InstallPulumi: opts.InstallPulumi, Environ: s.componentEnviron})
}

func (s *session) sealer(cfg *config.Config) (*secrets.Sealer, error) {
	for _, k := range []string{"DEPLOYER_SECRETS_PASSPHRASE", secrets.NewPassphraseVar, "PULUMI_CONFIG_PASSPHRASE"} {
		s.f.Masker.Add(s.f.Getenv(k)) // never printed either
	}
	p, err := secrets.NewProvider(cfg.Pulumi.SecretsProvider, s.f.Getenv)
	if err != nil {
		return nil, err
	}
	return secrets.NewSealer(p, s.f.Masker), nil
}

func (s *session) config() (*config.Config, error) {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	if cfg != nil {
		return cfg, nil
	}
	path := s.f.ConfigPath
	if path == "" {
		path = "deployer.yaml"
	}
	cfg, err := s.stackConfig(path)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cfg = cfg
	s.mu.Unlock()
	return cfg, nil
}

// stackConfig loads the deployer.yaml at path with the registries' checks,
// DEPLOYER_MAX_CONFIG_VALUES (an invalid value is reported by config's own
// variable checks and the default applies here) and the DEPLOYER_* layer.
func (s *session) stackConfig(path string) (*config.Config, error) {
	n, _ := config.ParseMaxValues(s.f.Getenv(config.MaxValuesVar))
	cfg, err := config.Load(path, append(configOptions(), config.WithMaxValues(n))...)
	if err != nil {
		return nil, err
	}
	if err := config.ApplyEnv(cfg, s.f.Getenv, configOptions()...); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (s *session) audit() (*slog.Logger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.auditLog != nil {
		return s.auditLog, nil
	}
	l, c, err := audit.OpenMasked(s.f.AuditPath, s.f.Masker.Writer)
	if err != nil {
		return nil, err
	}
	s.auditLog = l
	s.closers = append(s.closers, c)
	return l, nil
}

// backendOptions are the registry's options for cfg; writes says the
// command will write (backends.Options.Writes).
func backendOptions(cfg *config.Config, writes bool) backends.Options {
	return backends.Options{BaseDir: cfg.Dir, SSE: cfg.Backend.SSE, KMSKeyID: cfg.Backend.KMSKeyID, PathStyle: cfg.Backend.PathStyle,
		LockURL: cfg.Backend.Lock, Writes: writes}
}

func (s *session) locks(ctx context.Context, cfg *config.Config, writes bool) (*lockmgr.Manager, error) {
	b, err := backends.OpenLock(ctx, cfg.Backend.Lock, backendOptions(cfg, writes))
	if err != nil {
		return nil, err
	}
	s.addCloser(closerFunc(b.Close))
	if w := backends.LockWarning(cfg.Backend.Lock); w != "" {
		fmt.Fprintln(s.f.IO.ErrOut, w)
	}
	al, err := s.audit()
	if err != nil {
		return nil, err
	}
	m := lockmgr.NewManager(b, lockmgr.Options{
		TTL: cfg.Backend.LockTTL, HeartbeatInterval: cfg.Backend.HeartbeatInterval, StaleAfter: cfg.Backend.StaleAfter,
		MaxClockSkew: cfg.Backend.MaxClockSkew, Now: s.f.Now, Audit: al, Observer: s.metrics(ctx, cfg),
		OnWait: s.onLockWait(),
	})
	s.mu.Lock()
	s.managers = append(s.managers, m)
	s.mu.Unlock()
	return m, nil
}

// onLockWait reports waits for a held lock on stderr (waitReporter:
// docs/locking.md#waiting-for-a-lock) and, in GitHub Actions, as one notice
// per run (GitHub shows at most 10 per step).
func (s *session) onLockWait() func(lockmgr.WaitEvent) {
	rep := newWaitReporter(s.f.IO.ErrOut, s.f.IO.ErrTTY())
	return func(ev lockmgr.WaitEvent) {
		if !ev.Done && ev.Retrying == nil {
			s.f.GitHub.LockWait(ev.Holder)
		}
		rep.event(ev)
	}
}

func (s *session) holdsLeases() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.managers {
		if m.Held() > 0 {
			return true
		}
	}
	return false
}

func (s *session) stacking() bool { return s.stackRun.Load() > 0 }

func (s *session) track() func() {
	s.stackRun.Add(1)
	return func() { s.stackRun.Add(-1) }
}

func (s *session) sealedStore(ctx context.Context, cfg *config.Config, writes bool) (*statestore.Store, error) {
	sealer, err := s.sealer(cfg)
	if err != nil {
		return nil, err
	}
	return s.openStore(ctx, cfg, writes, statestore.WithSealer(sealer))
}

func (s *session) openStore(ctx context.Context, cfg *config.Config, writes bool, opts ...statestore.Option) (*statestore.Store, error) {
	b, err := backends.OpenState(ctx, cfg.Backend.State, backendOptions(cfg, writes))
	if err != nil {
		return nil, err
	}
	s.addCloser(closerFunc(b.Close))
	if backends.IsLocal(cfg.Backend.State) {
		s.f.GitHub.WarnFileState(cfg.Backend.State)
	}
	opts = append([]statestore.Option{statestore.WithMaxDocumentBytes(cfg.Backend.MaxStateSize)}, opts...)
	return statestore.New(b, opts...), nil
}

func (s *session) stackService(ctx context.Context, cfg *config.Config, opts EngineOptions, withLocks bool) (*deploy.Service, error) {
	var engines []engine.Engine
	if s.f.NewEngines != nil {
		engines = s.f.NewEngines(cfg, opts)
	}
	s.mu.Lock()
	s.perStack = append(s.perStack, engines...)
	s.mu.Unlock()
	return s.newService(ctx, cfg, withLocks, engines, &prefixWriter{mu: &s.errMu, w: s.f.IO.ErrOut, prefix: "[" + cfg.Stack + "] "})
}

// newService wires a deploy.Service; its backends are opened by the use
// case, after the engines' preflight (deploy.Deps.Open).
func (s *session) newService(ctx context.Context, cfg *config.Config, withLocks bool, engines []engine.Engine, progress io.Writer) (*deploy.Service, error) {
	al, err := s.audit()
	if err != nil {
		return nil, err
	}
	open := func(ctx context.Context) (*lockmgr.Manager, *statestore.Store, error) {
		var locks *lockmgr.Manager
		if withLocks {
			var err error
			if locks, err = s.locks(ctx, cfg, true); err != nil {
				return nil, nil, err
			}
		}
		store, err := s.sealedStore(ctx, cfg, withLocks)
		if err != nil {
			return nil, nil, err
		}
		if s.f.Verbose {
			fmt.Fprintf(s.f.IO.ErrOut, "config %s; state %s; lock %s (ttl %s, heartbeat %s, stale after %s)\n",
				cfg.Path, backendurl.Redact(cfg.Backend.State), backendurl.Redact(cfg.Backend.Lock), cfg.Backend.LockTTL, cfg.Backend.HeartbeatInterval, cfg.Backend.StaleAfter)
		}
		return locks, store, nil
	}
	return deploy.New(deploy.Deps{
		Open: open, Engines: engines,
		Audit: al, Now: s.f.Now, Progress: progress, Getenv: s.f.Getenv, Observer: s.metrics(ctx, cfg), Masker: s.f.Masker,
		Version: BuildVersion().Identity(),
	}), nil
}

// engines returns the engines of this run, built once (Factory.NewEngines).
func (s *session) engines(cfg *config.Config, opts EngineOptions) []engine.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil && s.f.NewEngines != nil {
		s.running = s.f.NewEngines(cfg, opts)
	}
	return s.running
}

func (s *session) killEngines() {
	s.mu.Lock()
	running := append(slices.Clone(s.running), s.perStack...)
	s.mu.Unlock()
	for _, e := range running {
		e.Kill()
	}
}

// progress is where engines stream component output: stderr, with each
// component's lines in a log group under GitHub Actions.
func (s *session) progress() io.Writer {
	if !s.f.GitHub.Env().Actions {
		return s.f.IO.ErrOut
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = ghactions.NewGroupWriter(s.f.IO.ErrOut)
	}
	return s.groups
}

func (s *session) metrics(ctx context.Context, cfg *config.Config) *metrics.Recorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recorder != nil {
		return s.recorder
	}
	emf := ""
	if cfg != nil {
		emf = cfg.Metrics.EMF
	}
	r, err := metrics.New(ctx, metrics.Options{Getenv: s.f.Getenv, EMFPath: emf, Version: Version, Now: s.f.Now})
	if err != nil {
		fmt.Fprintf(s.f.IO.ErrOut, "Warning: metrics: %v; continuing without them\n", err)
	}
	s.recorder = r
	return r
}

func (s *session) close() {
	s.mu.Lock()
	groups, recorder, closers := s.groups, s.recorder, s.closers
	s.groups, s.recorder, s.closers = nil, nil, nil
	s.mu.Unlock()
	if groups != nil {
		_ = groups.Close()
	}
	if recorder != nil {
		if err := recorder.Shutdown(context.Background()); err != nil {
			fmt.Fprintf(s.f.IO.ErrOut, "Warning: metrics: %v\n", err)
		}
	}
	for i := len(closers) - 1; i >= 0; i-- {
		_ = closers[i].Close()
	}
}

// addCloser keeps c to close in close.
func (s *session) addCloser(c io.Closer) {
	s.mu.Lock()
	s.closers = append(s.closers, c)
	s.mu.Unlock()
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

func orDash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
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

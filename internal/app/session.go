package app

import (
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
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engines"
	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/metrics"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/termui"
)

// NewSession wires a Factory on the process's streams and environment and
// returns it with the Session that holds what its constructors open: main
// keeps the Session for its signal handling. Everything written to io.Out
// and io.ErrOut goes through the Masker.
func NewSession(io *termui.IOStreams) (*Factory, *Session) {
	f := &Factory{IO: io, Process: Process{Getenv: os.Getenv, Environ: os.Environ}}
	s := &Session{f: f}
	f.Masker = secrets.NewMasker()
	// The CI's tokens and AWS secret keys are masked from the first byte
	// of output, whatever reads them later (docs/secrets.md#masked-everywhere).
	f.Masker.Add(secrets.EnvironSecrets(f.Environ())...)
	// So are the passphrases, before any argument is checked: an error
	// that quotes an argument (-e "$DEPLOYER_SECRETS_PASSPHRASE") masks them.
	for _, k := range passphraseVars {
		f.Masker.Add(f.Getenv(k))
	}
	if io != nil {
		if f.Getenv("GITHUB_ACTIONS") == "true" {
			f.Masker.AnnounceTo(io.ErrOut)
		}
		f.RawOut = io.Out
		io.Mask = f.Masker.Mask
		io.Out, io.ErrOut = f.Masker.Writer(io.Out), f.Masker.Writer(io.ErrOut)
		// The environment is read when first reported: tests set Getenv after.
		s.github = ghactions.NewReporter(func(k string) string { return f.Getenv(k) }, io.ErrOut, f.Masker,
			ghactions.Hints{Remedy: termui.Remedy, UnlockCommand: termui.UnlockCommand})
	}
	f.session = s
	f.NewEngines = s.registryEngines
	f.Config, f.StackConfig, f.Audit, f.Metrics = s.config, s.stackConfig, s.audit, s.metrics
	f.Locks, f.Store, f.Service, f.Close = s.locks, s.store, s.service, s.close
	return f, s
}

// ConfigOptions check deployer.yaml against the registries: the backend
// URL schemes and the engines' kinds.
func ConfigOptions() []config.Option {
	return []config.Option{config.WithBackends(backends.Schemes()), config.WithKinds(engines.Kinds())}
}

// Session is what the Factory's constructors built and opened in this
// process: the loaded deployer.yaml, the audit log, the metrics recorder,
// the backends (closed by close), the lock managers and engines main's
// signal handling reads (HoldsLeases, Stacking, KillEngines). It reads the
// Factory's fields (Getenv, the global flags) when a constructor is
// called, not when it was made. It is the wiring behind the Factory, as
// GitHub CLI's pkg/cmd/factory is behind cmdutil.Factory.
type Session struct {
	f *Factory
	// github reports the run under GitHub Actions (job summary, outputs,
	// annotations, comments; nothing outside Actions): the Reporter the
	// Session registers with the use cases (docs/design.md#reporting).
	// Nil without streams.
	github *ghactions.Reporter

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
// deployer's own (Factory.Environ), of which the Command engine passes what
// the rule of children allows (proc.Environ,
// docs/secrets.md#what-children-get).
func (s *Session) componentEnviron() []string {
	if s.f.Environ == nil {
		return []string{}
	}
	return s.f.Environ()
}

// registryEngines builds every engine of the registry for a run on cfg.
func (s *Session) registryEngines(cfg *config.Config, opts EngineOptions) []engine.Engine {
	state := cfg.Backend.State
	if strings.HasPrefix(state, "file://") {
		if dir, err := backendurl.FileDir(state, cfg.Dir); err == nil {
			state = "file://" + dir
		}
	}
	return engines.New(engines.Options{StateURL: state, SecretsProvider: cfg.Pulumi.SecretsProvider, PulumiCommand: cfg.Pulumi.Command,
		InstallPulumi: opts.InstallPulumi, Environ: s.componentEnviron, Grace: opts.Grace})
}

// passphraseVars name the variables that hold a secrets passphrase.
var passphraseVars = []string{"DEPLOYER_SECRETS_PASSPHRASE", secrets.NewPassphraseVar, "PULUMI_CONFIG_PASSPHRASE"}

func (s *Session) sealer(cfg *config.Config) (*secrets.Sealer, error) {
	for _, k := range passphraseVars {
		s.f.Masker.Add(s.f.Getenv(k)) // never printed either
	}
	p, err := secrets.NewProvider(cfg.Pulumi.SecretsProvider, s.f.Getenv)
	if err != nil {
		return nil, err
	}
	return secrets.NewSealer(p, s.f.Masker), nil
}

func (s *Session) config() (*config.Config, error) {
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
func (s *Session) stackConfig(path string) (*config.Config, error) {
	n, _ := config.ParseMaxValues(s.f.Getenv(config.MaxValuesVar))
	cfg, err := config.Load(path, append(ConfigOptions(), config.WithMaxValues(n))...)
	if err != nil {
		return nil, err
	}
	if err := config.ApplyEnv(cfg, s.f.Getenv, ConfigOptions()...); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (s *Session) audit() (*slog.Logger, error) {
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

// BackendOptions are the registry's options for cfg; writes says the
// command will write (backends.Options.Writes).
func BackendOptions(cfg *config.Config, writes bool) backends.Options {
	return backends.Options{BaseDir: cfg.Dir, SSE: cfg.Backend.SSE, KMSKeyID: cfg.Backend.KMSKeyID, PathStyle: cfg.Backend.PathStyle,
		LockURL: cfg.Backend.Lock, Writes: writes}
}

func (s *Session) locks(ctx context.Context, cfg *config.Config, access Access) (*lockmgr.Manager, error) {
	b, err := backends.OpenLock(ctx, cfg.Backend.Lock, BackendOptions(cfg, access == ReadWrite))
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
// per run (GitHub shows at most 10 per step): the Reporter's LockWait.
func (s *Session) onLockWait() func(lockmgr.WaitEvent) {
	rep := termui.NewWaitReporter(s.f.IO.ErrOut, s.f.IO.ErrTTY())
	return func(ev lockmgr.WaitEvent) {
		if !ev.Done && ev.Retrying == nil {
			s.reporter().LockWait(ev.Holder)
		}
		rep.Event(ev)
	}
}

// HoldsLeases reports whether a lock taken by this process is still
// held: until it is released, a cancelled command must not exit early.
func (s *Session) HoldsLeases() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.managers {
		if m.Held() > 0 {
			return true
		}
	}
	return false
}

// Stacking reports whether a plan, deploy or destroy --all is still
// running or reporting its stacks, or a command that stops on its own at
// a signal (Factory.StopsOnSignal) still runs: a signal must not cut them
// short.
func (s *Session) Stacking() bool { return s.stackRun.Load() > 0 }

// track counts a --all run (or a command that stops on its own) in
// Stacking until the returned func is called.
func (s *Session) track() func() {
	s.stackRun.Add(1)
	return func() { s.stackRun.Add(-1) }
}

// store opens the state backend for access (Factory.Store).
func (s *Session) store(ctx context.Context, cfg *config.Config, access Access) (*statestore.Store, error) {
	if access == ReadSealed {
		return s.openStore(ctx, cfg, false)
	}
	return s.sealedStore(ctx, cfg, access == ReadWrite)
}

func (s *Session) sealedStore(ctx context.Context, cfg *config.Config, writes bool) (*statestore.Store, error) {
	sealer, err := s.sealer(cfg)
	if err != nil {
		return nil, err
	}
	return s.openStore(ctx, cfg, writes, statestore.WithSealer(sealer))
}

func (s *Session) openStore(ctx context.Context, cfg *config.Config, writes bool, opts ...statestore.Option) (*statestore.Store, error) {
	b, err := backends.OpenState(ctx, cfg.Backend.State, BackendOptions(cfg, writes))
	if err != nil {
		return nil, err
	}
	s.addCloser(closerFunc(b.Close))
	if backends.IsLocal(cfg.Backend.State) {
		s.reporter().WarnFileState(cfg.Backend.State)
	}
	opts = append([]statestore.Option{statestore.WithMaxDocumentBytes(cfg.Backend.MaxStateSize)}, opts...)
	return statestore.New(b, opts...), nil
}

// service wires the use cases on cfg as opts says (Factory.Service).
func (s *Session) service(ctx context.Context, cfg *config.Config, opts ServiceOptions) (*deploy.Service, error) {
	if opts.Stack {
		return s.stackService(ctx, cfg, opts)
	}
	return s.newService(ctx, cfg, opts, s.engines(cfg, opts.EngineOptions), s.progress(), false)
}

func (s *Session) stackService(ctx context.Context, cfg *config.Config, opts ServiceOptions) (*deploy.Service, error) {
	var engines []engine.Engine
	if s.f.NewEngines != nil {
		engines = s.f.NewEngines(cfg, opts.EngineOptions)
	}
	s.mu.Lock()
	s.perStack = append(s.perStack, engines...)
	s.mu.Unlock()
	return s.newService(ctx, cfg, opts, engines, prefixLines(&s.errMu, s.f.IO.ErrOut, "["+cfg.Stack+"] ", s.actions()), true)
}

// newService wires a deploy.Service; its backends are opened by the use
// case, after the engines' preflight (deploy.Deps.Open). Its UI is opts.UI
// with the live progress hearing the steps. It reports to the metrics
// recorder and, but for a stack of a --all run (whose runner reports each
// stack), to the Session's Reporter.
func (s *Session) newService(ctx context.Context, cfg *config.Config, opts ServiceOptions, engines []engine.Engine, progress io.Writer, prefixed bool) (*deploy.Service, error) {
	withLocks := !opts.ReadOnly
	if opts.UI == nil {
		opts.UI = deploy.NoUI{}
	}
	al, err := s.audit()
	if err != nil {
		return nil, err
	}
	open := func(ctx context.Context) (*lockmgr.Manager, *statestore.Store, error) {
		var locks *lockmgr.Manager
		if withLocks {
			var err error
			if locks, err = s.locks(ctx, cfg, ReadWrite); err != nil {
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
	ios := s.f.IO
	now := s.f.Now
	if now == nil {
		now = time.Now
	}
	// One live block on a terminal: the stacks of a --all run (prefixed
	// progress) report in lines, as in a log.
	live := termui.NewLiveProgress(progress, ios.ErrTTY() && !prefixed, ios.ColorErr(), termui.ProgressEvery(s.f.Getenv), ios.ErrWidth, now)
	var rep deploy.Reporter = s.reporter()
	if prefixed {
		rep = deploy.NoReporter{}
	}
	return deploy.New(deploy.Deps{
		Deps:    core.Deps{Open: open, Audit: al, Now: s.f.Now, Progress: live, Getenv: s.f.Getenv, Observer: s.metrics(ctx, cfg), Masker: s.f.Masker},
		Engines: engines, UI: termui.LiveUI{UI: opts.UI, Live: live}, Reporter: rep, Version: BuildVersion().Identity(),
	}), nil
}

// engines returns the engines of this run, built once (Factory.NewEngines).
func (s *Session) engines(cfg *config.Config, opts EngineOptions) []engine.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil && s.f.NewEngines != nil {
		s.running = s.f.NewEngines(cfg, opts)
	}
	return s.running
}

// KillEngines stops every engine process at once (the second Ctrl-C).
func (s *Session) KillEngines() {
	s.mu.Lock()
	running := append(slices.Clone(s.running), s.perStack...)
	s.mu.Unlock()
	for _, e := range running {
		e.Kill()
	}
}

// progress is where engines stream component output: stderr, with each
// component's lines in a log group under GitHub Actions.
func (s *Session) progress() io.Writer {
	if !s.actions() {
		return s.f.IO.ErrOut
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = ghactions.NewGroupWriter(s.f.IO.ErrOut)
	}
	return s.groups
}

func (s *Session) metrics(ctx context.Context, cfg *config.Config) *metrics.Recorder {
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

func (s *Session) close() {
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
func (s *Session) addCloser(c io.Closer) {
	s.mu.Lock()
	s.closers = append(s.closers, c)
	s.mu.Unlock()
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

// prefixLines writes each line with a prefix, whole, under mu (shared by
// the stacks of a run); a partial line waits for its end. Under GitHub
// Actions (actions) each line passes through sanitize.Commands.
func prefixLines(mu *sync.Mutex, w io.Writer, prefix string, actions bool) io.Writer {
	return &engine.WholeLines{Mu: mu, Line: func(line []byte) error {
		text := string(line)
		if actions { // the runner reads no workflow command a component prints
			text = sanitize.Commands(text)
		}
		_, _ = io.WriteString(w, prefix+text)
		return nil
	}}
}

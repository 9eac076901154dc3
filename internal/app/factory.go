package app

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/metrics"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/termui"
)

// Factory is what the commands are built from, as GitHub CLI's
// cmdutil.Factory: the process's streams, environment and global flags,
// the Masker every command shares, and lazy constructors. A constructor
// builds its value on its first call and hands the same one out after
// (deployer.yaml, the audit log, the metrics recorder); the backends it
// opens are closed by Close. A
// command takes the values and constructors it needs into its options when
// it is built; tests replace any of them. The Factory keeps no per-run
// state: what the constructors opened is held by the Session that wired
// them (session.go).
type Factory struct {
	IO *termui.IOStreams
	// Process is the environment and the clock the commands read
	// (f.Getenv is f.Process.Getenv).
	Process
	// Globals are the global flags, bound by the root command before a
	// command runs (f.JSON is f.Globals.JSON).
	Globals

	// Masker hides every known secret value in IO.Out and IO.ErrOut as ***
	// (docs/secrets.md); under GitHub Actions it announces each value with
	// ::add-mask::.
	Masker *secrets.Masker
	// RawOut is stdout before masking (state show --show-secrets).
	RawOut io.Writer

	// Loaders read deployer.yaml and open the audit log and the metrics
	// recorder, once each (f.Config is f.Loaders.Config).
	Loaders
	// Backends open the lock and state backends and wire the use cases on
	// them (f.Service is f.Backends.Service).
	Backends
	// Close ends the open log group, flushes metrics (waiting at most
	// metrics.ShutdownTimeout for an OTLP collector) and closes the backends
	// and the audit log.
	Close func()

	// session is what the constructors opened; a --all run counts itself
	// in it (Session.Stacking).
	session *Session
}

// Process is the environment and clock of the process the commands run in.
type Process struct {
	Getenv func(string) string
	// Environ is the process environment Command components start from
	// (nil is none), and lock exec and guard stop commands (nil is
	// os.Environ).
	Environ func() []string
	// Now is the clock of the use cases, lock verdicts and metrics; nil
	// leaves each package below its own (the system clock). Tests set a fixed one.
	Now func() time.Time
}

// Loaders are the Factory's constructors of what every command may read:
// deployer.yaml, the audit log, the metrics recorder.
type Loaders struct {
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
}

// Backends are the Factory's constructors of the engines, the lock and
// state backends and the use cases' Service on them.
type Backends struct {
	// NewEngines builds the engines of a run: by default every engine of
	// the registry (internal/engines); tests give their own. Nil means none.
	NewEngines func(cfg *config.Config, opts EngineOptions) []engine.Engine
	// Locks opens the lock backend. For a command that takes locks
	// (ReadWrite) a backend that checks its server before writing does it
	// now (the S3 conditional-write probe); with `lock: none` it prints the
	// warning of docs/self-hosted.md#locking-off-lock-none. A command that
	// only reads locks (ReadOnly) makes no write request
	// (docs/design.md#read-only-commands).
	Locks func(ctx context.Context, cfg *config.Config, access Access) (*lockmgr.Manager, error)
	// Store opens the state backend, its secrets sealed on write and opened
	// on read; with ReadSealed, without a key, for reading with secrets left
	// sealed (state show, history).
	Store func(ctx context.Context, cfg *config.Config, access Access) (*statestore.Store, error)
	// Service wires the use cases on cfg; the use case opens the lock and
	// state backends after the engines' preflight (ServiceOptions says
	// which).
	Service func(ctx context.Context, cfg *config.Config, opts ServiceOptions) (*deploy.Service, error)
}

// Globals are the global flags of every command (NewRootCmd), layered
// over their DEPLOYER_* variables by the root command (internal/cli).
type Globals struct {
	ConfigPath string
	AuditPath  string
	JSON       bool
	NoColor    bool
	Verbose    bool
}

// Access is what a command does with a backend it opens.
type Access int

const (
	// ReadWrite takes locks and writes state.
	ReadWrite Access = iota
	// ReadOnly only reads: no write request
	// (docs/design.md#read-only-commands).
	ReadOnly
	// ReadSealed reads state with its secrets left sealed: no key needed
	// (state show, history). For locks it is ReadOnly.
	ReadSealed
)

// EngineOptions are engine flags of deploy/destroy/plan.
type EngineOptions struct {
	InstallPulumi bool
	// Grace is deploy/destroy --grace: the Command components' time between
	// SIGTERM and SIGKILL where command.grace sets none (0: the default).
	Grace time.Duration
}

// ServiceOptions say how Factory.Service wires the use cases.
type ServiceOptions struct {
	EngineOptions
	// ReadOnly wires the use cases that take no lock and write no state
	// (plan): the lock backend is never opened and the state backend is
	// read only.
	ReadOnly bool
	// Stack wires the use case for one stack of a plan, deploy or destroy
	// --all: its own engines, its progress lines on stderr marked
	// "[stack] " (docs/many-stacks.md#output).
	Stack bool
	// UI shows the plan of a deploy or destroy and asks to apply it (nil:
	// deploy.NoUI); the session's live progress hears the steps.
	UI deploy.UI
}

// NewFactory returns a Factory on the process's streams and environment
// (NewSession's). Everything written to io.Out and io.ErrOut goes through
// the Masker: a secret value that becomes known (from deployer.yaml or
// opened state) is printed as *** (docs/secrets.md).
func NewFactory(io *termui.IOStreams) *Factory {
	f, _ := NewSession(io)
	return f
}

// UseCase binds the state operation call (a method expression such as
// (*stateops.Ops).Restore) to the backends a command's config names: the
// returned function opens the Ops (StateOps) and calls it with req.
// Errors: f.Service's, then the use case's.
func UseCase[Req, Res any](f *Factory, call func(*stateops.Ops, context.Context, Req) (Res, error)) func(context.Context, *config.Config, Req) (Res, error) {
	return func(ctx context.Context, cfg *config.Config, req Req) (Res, error) {
		ops, err := StateOps(ctx, f, cfg)
		if err != nil {
			var zero Res
			return zero, err
		}
		return call(ops, ctx, req)
	}
}

// StateOps wires the state operations on cfg, on the core of the Service
// f.Service wires with default options, reporting to the Session's
// Reporter.
func StateOps(ctx context.Context, f *Factory, cfg *config.Config) (*stateops.Ops, error) {
	svc, err := f.Service(ctx, cfg, ServiceOptions{})
	if err != nil {
		return nil, err
	}
	return stateops.New(svc.Core()).WithReporter(f.session.reporter()), nil
}

// Locking wires the lock use cases on cfg's lock backend, opened to break
// or take locks, reporting to the Session's Reporter; a broken holder's
// deployment is recorded through StateOps.
func Locking(ctx context.Context, f *Factory, cfg *config.Config) (*stateops.Locking, error) {
	m, err := f.Locks(ctx, cfg, ReadWrite)
	if err != nil {
		return nil, err
	}
	return stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: f.Getenv, Reporter: f.session.reporter(),
		Ops: func(ctx context.Context) (*stateops.Ops, error) { return StateOps(ctx, f, cfg) }}), nil
}

// StopsOnSignal counts the running command as one that watches its context
// and stops on its own at Ctrl-C (deployer ui shuts its server down) until
// the returned func is called: the exit at once of a cancelled command that
// holds no lock (docs/exit-codes.md) leaves it to finish, with its own exit
// code.
func (f *Factory) StopsOnSignal() (done func()) {
	if f.session == nil {
		return func() {}
	}
	return f.session.track()
}

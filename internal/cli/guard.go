package cli

import (
	"context"
	"errors"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/guard"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/termui"
)

// GuardStopOptions are the options of `deployer guard stop`.
type GuardStopOptions struct {
	IO *termui.IOStreams

	// From argv and the global flags.
	Name             string
	As               string
	DryRun           bool
	DetailedExitCode bool
	JSON             bool

	// Stop is the use case (guard.Guard.Stop on deployer.yaml's shared:
	// resources, bound by NewCmdGuardStop; a run test sets a fake).
	Stop func(ctx context.Context, name, as string, dryRun bool) (*guard.Result, error)
}

// GuardStatusOptions are the options of `deployer guard status`.
type GuardStatusOptions struct {
	IO *termui.IOStreams

	// From argv and the global flags.
	Name string
	JSON bool

	// Status is the use case (guard.Guard.Status, bound by
	// NewCmdGuardStatus; a run test sets a fake).
	Status func(ctx context.Context, name string) ([]guard.SharerStatus, error)
}

// NewCmdGuardStop returns `deployer guard stop`; runF replaces runGuardStop
// in tests.
func NewCmdGuardStop(f *app.Factory, runF func(context.Context, *GuardStopOptions) error) *cobra.Command {
	opts := &GuardStopOptions{IO: f.IO, Stop: guardStop(f)}
	stop := &cobra.Command{
		Use:   "stop NAME --as APP",
		Short: "Run NAME's stop command if every sharer other than APP is DOWN",
		Long: heredoc.Doc(`
			Takes NAME's lock (a few retries, then skips: fail safe), HEADs every other sharer's
			status_url (200 = UP, other = DOWN, no answer = UNKNOWN, counted as UP) and runs the stop
			command only when all are DOWN. A resource with no other sharer stops at once, without a lock.
			Exit 0 when a safe decision was made; with --detailed-exitcode: 0 stopped, 2 skipped because a
			sharer is UP or UNKNOWN, 3 skipped because the lock was held. 1: the stop command failed.`),
		Example: "  deployer guard stop orders-db --as app-a\n  deployer guard stop orders-db --as app-a --dry-run --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if opts.As == "" {
				return &exitcode.UsageError{Msg: "--as APP is required: the application being stopped, one of NAME's sharers"}
			}
			if err := app.ValidateName("shared resource", opts.Name); err != nil {
				return err
			}
			if err := app.ValidateName("application", opts.As); err != nil {
				return err
			}
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, runGuardStop)
		},
	}
	stop.Flags().StringVar(&opts.As, "as", "", "the application being stopped (left out of the checks)")
	stop.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check and decide, but take no lock and run nothing")
	stop.Flags().BoolVar(&opts.DetailedExitCode, "detailed-exitcode", false, "exit 2 when skipped for an active sharer, 3 when skipped for the lock")
	return stop
}

// NewCmdGuardStatus returns `deployer guard status`; runF replaces
// runGuardStatus in tests.
func NewCmdGuardStatus(f *app.Factory, runF func(context.Context, *GuardStatusOptions) error) *cobra.Command {
	opts := &GuardStatusOptions{IO: f.IO, Status: guardStatus(f)}
	return &cobra.Command{
		Use:     "status NAME",
		Short:   "Show the quick status of every sharer of NAME, without a lock",
		Example: "  deployer guard status orders-db --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if err := app.ValidateName("shared resource", opts.Name); err != nil {
				return err
			}
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, runGuardStatus)
		},
	}
}

// NewCmdGuard returns `deployer guard` with its stop and status commands
// (docs/guard.md).
func NewCmdGuard(f *app.Factory) *cobra.Command {
	parent := &cobra.Command{
		Use:   "guard",
		Short: "Stop a shared resource only when every other application sharing it is down",
		Long: heredoc.Doc(`
			A resource listed under shared: in deployer.yaml (a database used by several applications)
			is stopped by guard stop only when every other sharer's status URL says it is down, under a
			lock, so two stops racing never both run it. See docs/guard.md.`),
	}
	parent.AddCommand(NewCmdGuardStop(f, nil), NewCmdGuardStatus(f, nil))
	return parent
}

// guardStop is the guard stop use case on f's configuration, its metrics
// recorded.
func guardStop(f *app.Factory) func(ctx context.Context, name, as string, dryRun bool) (*guard.Result, error) {
	return func(ctx context.Context, name, as string, dryRun bool) (*guard.Result, error) {
		cfg, g, err := newGuard(f)
		if err != nil {
			return nil, err
		}
		g.Observer = f.Metrics(ctx, cfg)
		return g.Stop(ctx, cfg, name, as, dryRun)
	}
}

// guardStatus is the guard status use case on f's configuration.
func guardStatus(f *app.Factory) func(ctx context.Context, name string) ([]guard.SharerStatus, error) {
	return func(ctx context.Context, name string) ([]guard.SharerStatus, error) {
		cfg, g, err := newGuard(f)
		if err != nil {
			return nil, err
		}
		return g.Status(ctx, cfg, name)
	}
}

// newGuard loads deployer.yaml and wires the use case to the configured
// lock backend, the audit log and stderr.
func newGuard(f *app.Factory) (*config.Config, *guard.Guard, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	al, err := f.Audit()
	if err != nil {
		return nil, nil, err
	}
	return cfg, guard.New(guard.Deps{
		Locks: func(ctx context.Context, cfg *config.Config) (*lockmgr.Manager, error) {
			return f.Locks(ctx, cfg, app.ReadWrite)
		}, Dir: cfg.Dir, Audit: al, Now: f.Now, Log: f.IO.ErrOut, Output: f.IO.ErrOut,
		Getenv: f.Getenv, Environ: f.Environ,
	}), nil
}

// guardError makes an unknown shared resource or application a usage
// error (exit 2).
func guardError(err error) error {
	var unknown *guard.UnknownError
	if errors.As(err, &unknown) {
		return &exitcode.UsageError{Msg: unknown.Msg}
	}
	return err
}

// runGuardStop calls the use case and renders its decision (human or
// --json); with --detailed-exitcode a skip exits 2 or 3. It uses only opts.
func runGuardStop(ctx context.Context, opts *GuardStopOptions) error {
	res, err := opts.Stop(ctx, opts.Name, opts.As, opts.DryRun)
	if res != nil && res.Decision != "" {
		if opts.JSON {
			if werr := opts.IO.PrintJSON(res); werr != nil {
				return werr
			}
		} else {
			termui.RenderGuardResult(opts.IO.Out, res)
		}
	}
	if err != nil {
		return guardError(err)
	}
	if opts.DetailedExitCode {
		switch res.Decision {
		case guard.SkippedSharedActive:
			return &exitcode.ExitCodeError{Code: 2}
		case guard.SkippedLock:
			return &exitcode.ExitCodeError{Code: 3}
		}
	}
	return nil
}

// runGuardStatus calls the use case and renders the sharers' status (human
// or --json). It uses only opts.
func runGuardStatus(ctx context.Context, opts *GuardStatusOptions) error {
	sts, err := opts.Status(ctx, opts.Name)
	if err != nil {
		return guardError(err)
	}
	if opts.JSON {
		return opts.IO.PrintJSON(sts)
	}
	termui.RenderSharers(opts.IO.Out, sts)
	return nil
}

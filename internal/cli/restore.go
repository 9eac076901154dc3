package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/termui"
)

// RestoreOptions are the options of `deployer restore`.
type RestoreOptions struct {
	IO *termui.IOStreams

	// From argv and the global flags.
	Target      app.TargetFlags
	Serial      int64
	Timestamp   string
	Yes         bool
	LockTimeout time.Duration
	JSON        bool

	// Config loads deployer.yaml, or the defaults and DEPLOYER_BACKEND_*
	// without one.
	Config func() (*config.Config, error)
	// Restore is the use case: it opens the lock and state backends and
	// calls stateops.Ops.Restore (bound by NewCmdRestore; a run test sets
	// a fake).
	// It reports what it wrote itself (stateops.Reporter: the GitHub
	// Actions job summary and step outputs, docs/github-actions.md).
	Restore func(ctx context.Context, cfg *config.Config, req stateops.RestoreRequest) (*stateops.RestoreResult, error)
}

// NewCmdRestore returns `deployer restore`; runF replaces runRestore in tests.
func NewCmdRestore(f *app.Factory, runF func(context.Context, *RestoreOptions) error) *cobra.Command {
	opts := &RestoreOptions{
		IO:      f.IO,
		Config:  func() (*config.Config, error) { return app.ProjectConfig(f, "restore") },
		Restore: app.UseCase(f, (*stateops.Ops).Restore),
	}
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Write a history snapshot as a new serial (history stays append-only)",
		Long: heredoc.Doc(`
			Writes a history snapshot as a new serial with a restore deployment record, under the stack
			lock; the history stays append-only. --timestamp takes the newest snapshot at or before T that
			is not uncommitted. Also the repair of a state whose checksums do not verify.`),
		Example: `  deployer restore -e prod --serial 12
  deployer restore -e prod --timestamp 2024-01-15T14:00:00Z --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			if (opts.Serial > 0) == (opts.Timestamp != "") {
				return &exitcode.UsageError{Msg: "restore needs exactly one of --serial N or --timestamp T (RFC 3339); see deployer history"}
			}
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, app.WithTarget(&opts.Target, opts.Config, runRestore))
		},
	}
	opts.Target.Bind(cmd, false)
	cmd.Flags().Int64Var(&opts.Serial, "serial", 0, "restore the snapshot with this serial")
	cmd.Flags().StringVar(&opts.Timestamp, "timestamp", "", "restore the newest snapshot at or before this RFC 3339 time")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	app.BindLockTimeout(cmd, &opts.LockTimeout)
	return cmd
}

// runRestore resolves the target, asks on the terminal (unless --yes) with
// what the use case is about to write, calls it and prints what it wrote.
func runRestore(ctx context.Context, opts *RestoreOptions, cfg *config.Config, t deploy.Target) error {
	req := stateops.RestoreRequest{Target: t, Serial: opts.Serial, LockTimeout: opts.LockTimeout, Dir: cfg.Dir}
	if opts.Timestamp != "" {
		at, err := time.Parse(time.RFC3339, opts.Timestamp)
		if err != nil {
			return &exitcode.UsageError{Msg: fmt.Sprintf("--timestamp %q: want RFC 3339, e.g. 2024-01-15T14:20:00Z", opts.Timestamp)}
		}
		req.At = at
	}
	if !opts.Yes {
		if !opts.IO.CanPrompt() {
			return &exitcode.UsageError{Msg: "restore needs confirmation but there is no terminal to ask on: pass --yes to proceed"}
		}
		req.Confirm = func(p stateops.RestorePreview) (bool, error) {
			snap := p.Snapshot
			fmt.Fprintf(opts.IO.ErrOut, "Restore %s/%s to the snapshot of serial %d (%d resources, written %s) as serial %d.\n",
				t.Stack, t.Env, snap.Serial, len(snap.Resources), snap.Metadata.LastUpdated.UTC().Format(time.RFC3339), p.Serial)
			if p.Info.Uncommitted {
				fmt.Fprintf(opts.IO.ErrOut, "Serial %d never became state.json (its write did not complete; history shows it as uncommitted): it holds what that apply produced.\n", snap.Serial)
			}
			return opts.IO.Confirm("Restore?")
		}
	}
	res, err := opts.Restore(ctx, cfg, req)
	if err != nil {
		return err
	}
	if opts.JSON {
		return opts.IO.PrintJSON(map[string]any{"stack": t.Stack, "environment": t.Env, "serial": res.Head.Serial,
			"restored_from": res.RestoredFrom, "resources": len(res.State.Resources)})
	}
	fmt.Fprintf(opts.IO.Out, "Restored %s/%s from serial %d as serial %d (%d resources). The infrastructure was not changed: run deployer plan to compare.\n",
		t.Stack, t.Env, res.RestoredFrom, res.Head.Serial, len(res.State.Resources))
	return nil
}

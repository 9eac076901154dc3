package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/termui"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// StateShowOptions are the inputs of `deployer state show`.
type StateShowOptions struct {
	IO *termui.IOStreams
	// from argv
	Target app.TargetFlags
	Serial int64
	JSON   bool
	// ShowSecrets prints secret values in plain text (asks on a TTY, needs
	// --yes otherwise; audited as state.secrets_shown).
	ShowSecrets bool
	Yes         bool
	// SecretOut is stdout without the masking of secret values: where
	// --show-secrets prints.
	SecretOut io.Writer
	// Config loads deployer.yaml, or the defaults and DEPLOYER_BACKEND_*
	// without one (docs/design.md#read-only-commands).
	Config func() (*config.Config, error)
	// Show is the use case (stateops.ShowState on the configured state
	// backend), bound by NewCmdStateShow; a run test sets a fake.
	Show func(context.Context, *config.Config, stateops.ShowStateRequest) (*stateops.ShowStateResult, error)
}

// stateDeps are the collaborators of a read-only use case on a state:
// the state store, which opens secret values only when showSecrets
// (read-only otherwise, sealed), and the audit log.
func stateDeps(ctx context.Context, f *app.Factory, cfg *config.Config, showSecrets bool) (stateops.StateDeps, error) {
	access := app.ReadSealed
	if showSecrets {
		access = app.ReadOnly
	}
	store, err := f.Store(ctx, cfg, access)
	return stateops.StateDeps{Store: store, Audit: f.Audit}, err
}

// NewCmdStateShow returns `deployer state show`; runF replaces runStateShow
// in tests.
func NewCmdStateShow(f *app.Factory, runF func(context.Context, *StateShowOptions) error) *cobra.Command {
	opts := &StateShowOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return app.ProjectConfig(f, "state show") },
		Show: func(ctx context.Context, cfg *config.Config, req stateops.ShowStateRequest) (*stateops.ShowStateResult, error) {
			d, err := stateDeps(ctx, f, cfg, req.ShowSecrets)
			if err != nil {
				return nil, err
			}
			return stateops.ShowState(ctx, d, req)
		},
	}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the state of a stack/environment (verified)",
		Long: heredoc.Doc(`
			Prints the state of the stack/environment, or a history snapshot (--serial), after verifying
			its checksums. Every secret is shown as (sensitive); --show-secrets decrypts them (asks first;
			audited). When the newest deployment did not succeed, its error is printed under the table, and a
			component whose create or import failed (either adds no state entry) is listed as failed (create)
			or failed (import).
			Read-only: works with a role that may only read the state.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			opts.JSON = f.JSON
			opts.SecretOut = f.RawOut
			return runOr(cmd, opts, runF, app.WithTarget(&opts.Target, opts.Config, runStateShow))
		},
	}
	opts.Target.Bind(cmd, false)
	cmd.Flags().Int64Var(&opts.Serial, "serial", 0, "show the history snapshot with this serial")
	cmd.Flags().BoolVar(&opts.ShowSecrets, "show-secrets", false, "decrypt and print secret values (asks first; audited)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "with --show-secrets: do not ask")
	return cmd
}

// runStateShow resolves the target, asks before it shows secret values
// (unless --yes), calls the use case and prints the state (a table, or JSON
// with --json).
func runStateShow(ctx context.Context, opts *StateShowOptions, cfg *config.Config, t deploy.Target) error {
	req := stateops.ShowStateRequest{Target: t, Serial: opts.Serial, ShowSecrets: opts.ShowSecrets}
	if opts.ShowSecrets && !opts.Yes {
		req.Confirm = func(t deploy.Target) error {
			ok, err := opts.IO.Confirm(fmt.Sprintf("Print the secret values of %s/%s in plain text?", t.Stack, t.Env))
			if err != nil {
				return err
			}
			if !ok {
				return errors.New("state show --show-secrets cancelled")
			}
			return nil
		}
	}
	res, err := opts.Show(ctx, cfg, req)
	if err != nil {
		return err
	}
	st, w := res.State, opts.IO.Out
	if opts.ShowSecrets {
		if opts.SecretOut != nil {
			w = opts.SecretOut
		}
	} else {
		st = termui.MaskState(st)
	}
	return termui.RenderState(opts.IO, w, st, res, opts.JSON)
}

// StatePushOptions are the inputs of `deployer state push`.
type StatePushOptions struct {
	IO *termui.IOStreams
	// from argv
	Target      app.TargetFlags
	File        string
	Yes         bool
	Force       bool
	LockTimeout time.Duration
	// Config loads deployer.yaml, or the defaults and DEPLOYER_BACKEND_*
	// without one.
	Config func() (*config.Config, error)
	// Push is the use case (stateops.PushFile with the configured backends),
	// bound by NewCmdStatePush; a run test sets a fake.
	Push func(context.Context, *config.Config, stateops.PushRequest) (*stateops.PushResult, error)
}

// NewCmdStatePush returns `deployer state push FILE`: writes an errored state
// saved by a failed deploy as the next serial (docs/design.md#state-writes);
// runF replaces runStatePush in tests.
func NewCmdStatePush(f *app.Factory, runF func(context.Context, *StatePushOptions) error) *cobra.Command {
	opts := &StatePushOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return app.ProjectConfig(f, "state push") },
		Push: func(ctx context.Context, cfg *config.Config, req stateops.PushRequest) (*stateops.PushResult, error) {
			return stateops.PushFile(ctx, func(ctx context.Context) (*stateops.Ops, error) { return app.StateOps(ctx, f, cfg) }, req)
		},
	}
	cmd := &cobra.Command{
		Use:   "push FILE",
		Short: "Write a saved state file (deployer-errored-*.json) as the next serial",
		Long: heredoc.Doc(`
			Writes a state saved by a failed deploy (./deployer-errored-STACK-ENV.json, when the state
			write failed after infrastructure changed) as the next serial, under the stack lock. It must
			be the next version of the stored state: the same lineage, written from the stored serial.
			--force writes any other file, recorded in the history and the audit log.`),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			opts.File = args[0]
			return runOr(cmd, opts, runF, app.WithTarget(&opts.Target, opts.Config, runStatePush))
		},
	}
	opts.Target.Bind(cmd, false)
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "write without asking")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "write a file of another lineage or not written from the stored serial (audited)")
	app.BindLockTimeout(cmd, &opts.LockTimeout)
	return cmd
}

// runStatePush resolves the target, asks (unless --yes) with what the file
// holds, calls the use case and says which serial it wrote.
func runStatePush(ctx context.Context, opts *StatePushOptions, cfg *config.Config, t deploy.Target) error {
	req := stateops.PushRequest{Target: t, File: opts.File, LockTimeout: opts.LockTimeout, Force: opts.Force, MaxStateSize: cfg.Backend.MaxStateSize}
	if !opts.Yes {
		req.Confirm = func(t deploy.Target, st *statestore.State) error {
			ok, err := opts.IO.Confirm(fmt.Sprintf("Write %s (%d resources) as the next serial of %s/%s?", opts.File, len(st.Resources), t.Stack, t.Env))
			if err != nil || !ok {
				return errOr(err, "state push cancelled")
			}
			return nil
		}
	}
	res, err := opts.Push(ctx, cfg, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Wrote %s as serial %d of %s/%s.\n", opts.File, res.Head.Serial, res.Target.Stack, res.Target.Env)
	if res.Removed != "" {
		fmt.Fprintf(opts.IO.ErrOut, "Removed %s: it is in the state now.\n", res.Removed)
	}
	return nil
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

package cli

import (
	"context"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/termui"
)

// StateLocksOptions are the inputs of `deployer state locks`.
type StateLocksOptions struct {
	IO *termui.IOStreams
	// from argv
	Stack, Env string
	JSON       bool
	// Locks is the use case (stateops.Locking.Locks on the configured lock backend),
	// bound by NewCmdStateLocks; a run test sets a fake.
	Locks func(context.Context, stateops.LocksRequest) (*stateops.LocksResult, error)
}

// NewCmdStateLocks returns `deployer state locks`; runF replaces
// runStateLocks in tests.
func NewCmdStateLocks(f *app.Factory, runF func(context.Context, *StateLocksOptions) error) *cobra.Command {
	opts := &StateLocksOptions{IO: f.IO}
	opts.Locks = func(ctx context.Context, req stateops.LocksRequest) (*stateops.LocksResult, error) {
		cfg, err := app.ProjectConfig(f, "state locks")
		if err != nil {
			return nil, err
		}
		if req.Env != "" && req.Stack == "" {
			req.Stack = cfg.Stack
		}
		for _, n := range []struct{ what, v string }{{"stack", req.Stack}, {"environment", req.Env}} {
			if n.v != "" {
				if err := app.ValidateName(n.what, n.v); err != nil {
					return nil, err
				}
			}
		}
		m, err := f.Locks(ctx, cfg, app.ReadOnly)
		if err != nil {
			return nil, err
		}
		return stateops.NewLocking(stateops.LockDeps{Locks: m, Observer: f.Metrics(ctx, cfg)}).Locks(ctx, req)
	}
	cmd := &cobra.Command{
		Use:   "locks",
		Short: "List who holds which lock, with ACTIVE/STALE/EXPIRED verdicts",
		Long: heredoc.Doc(`
			Lists the held locks: holder, level, operation, age and the verdict ACTIVE, STALE or EXPIRED;
			"pid not running" for a holder on this host whose process is gone. Read-only. Outside a
			project (no deployer.yaml) it needs DEPLOYER_BACKEND_LOCK to name the backend.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, runStateLocks)
		},
	}
	cmd.Flags().StringVarP(&opts.Stack, "stack", "s", "", "only locks of this stack")
	cmd.Flags().StringVarP(&opts.Env, "environment", "e", "", "only locks of this environment (needs --stack)")
	return cmd
}

func runStateLocks(ctx context.Context, opts *StateLocksOptions) error {
	res, err := opts.Locks(ctx, stateops.LocksRequest{Stack: opts.Stack, Env: opts.Env})
	if err != nil {
		return err
	}
	return termui.RenderLocks(opts.IO, res, opts.JSON)
}

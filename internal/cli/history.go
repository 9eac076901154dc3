package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/termui"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
)

// HistoryOptions are the options of `deployer history`.
type HistoryOptions struct {
	IO *termui.IOStreams

	// From argv and the global flags.
	Target app.TargetFlags
	Limit  int
	JSON   bool

	// Config loads deployer.yaml, or the defaults and DEPLOYER_BACKEND_*
	// without one (docs/design.md#read-only-commands).
	Config func() (*config.Config, error)
	// History is the use case: it opens the state backend (no secrets key
	// needed) and calls stateops.Ops.History (bound by NewCmdHistory; a
	// run test sets a fake).
	History func(ctx context.Context, cfg *config.Config, req stateops.HistoryRequest) (*stateops.HistoryResult, error)
}

// NewCmdHistory returns `deployer history`; runF replaces runHistory in tests.
func NewCmdHistory(f *app.Factory, runF func(context.Context, *HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return app.ProjectConfig(f, "history") },
		History: func(ctx context.Context, cfg *config.Config, req stateops.HistoryRequest) (*stateops.HistoryResult, error) {
			store, err := f.Store(ctx, cfg, app.ReadSealed) // history shows no secret: no key needed
			if err != nil {
				return nil, err
			}
			return stateops.New(core.New(core.Deps{Store: store})).History(ctx, req)
		},
	}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List state snapshots and deployments, newest first",
		Long: heredoc.Doc(`
			Lists the history snapshots joined with the deployment records, newest first. A snapshot whose
			state.json write never completed is marked uncommitted (docs/state-format.md#history-snapshots);
			an abandoned deployment shows when it started, and a failed one its error on a line under its row
			(whitespace folded, long ones shortened in the middle; --json has it whole, as error). Read-only.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			if opts.Limit < 0 {
				return &exitcode.UsageError{Msg: fmt.Sprintf("--limit %d: want 0 (all entries) or a positive number", opts.Limit)}
			}
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, app.WithTarget(&opts.Target, opts.Config, runHistory))
		},
	}
	opts.Target.Bind(cmd, false)
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "show at most N entries (0: all)")
	return cmd
}

// runHistory resolves the target, calls the use case and prints its entries
// (a table, or JSON with --json). A state.json that failed verification
// fails the command after the snapshots are printed, saying how to restore
// one.
func runHistory(ctx context.Context, opts *HistoryOptions, cfg *config.Config, t deploy.Target) error {
	res, err := opts.History(ctx, cfg, stateops.HistoryRequest{Target: t, Limit: opts.Limit})
	if err != nil {
		return err
	}
	var stateErr error
	if res.StateErr != nil {
		stateErr = termui.Told(res.StateErr, fmt.Sprintf("the snapshots above are intact: restore one with deployer restore -s %s -e %s --serial N", t.Stack, t.Env))
	}
	if opts.JSON {
		return errors.Join(opts.IO.PrintJSON(res.Entries), stateErr)
	}
	return errors.Join(termui.RenderHistory(opts.IO, res.Entries), stateErr)
}

package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/termui"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
)

// StateMoveOptions are the flags and arguments of `deployer state mv`.
type StateMoveOptions struct {
	IO          *termui.IOStreams
	Target      app.TargetFlags
	From, To    string
	LockTimeout time.Duration
	Config      func() (*config.Config, error)
	// Move is the use case (stateops.Ops.StateMove with the configured
	// backends), bound by NewCmdStateMove; a run test sets a fake.
	Move func(context.Context, *config.Config, stateops.StateMoveRequest) (*stateops.StateMoveResult, error)
}

// NewCmdStateMove returns `deployer state mv FROM TO`: moves state entries
// to another address under the stack lock, running nothing
// (docs/operations.md#state-mv); runF replaces runStateMove in tests.
func NewCmdStateMove(f *app.Factory, runF func(context.Context, *StateMoveOptions) error) *cobra.Command {
	opts := &StateMoveOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return app.ProjectConfig(f, "state mv") },
		Move:   app.UseCase(f, (*stateops.Ops).StateMove),
	}
	cmd := &cobra.Command{
		Use:   "mv FROM TO",
		Short: "Move a component's (or a service's) state entries to another address, running nothing",
		Long: heredoc.Doc(`
			Moves the state entry of component FROM (SERVICE/NAME) to TO, or every component of service
			FROM to service TO, under the stack lock, as a new serial with a history record of type
			state-mv. The entries keep their outputs, engine record, lifecycle and history, and the
			components that depend on them follow. Nothing runs. To rename in deployer.yaml and have
			the next deploy move the entry, write a moved: entry instead (docs/operations.md).`),
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			opts.From, opts.To = args[0], args[1]
			if err := config.ValidateAddress(opts.To); err != nil { // names as deployer.yaml allows them
				return &exitcode.UsageError{Msg: err.Error()}
			}
			return runOr(cmd, opts, runF, app.WithTarget(&opts.Target, opts.Config, runStateMove))
		},
	}
	opts.Target.Bind(cmd, false)
	app.BindLockTimeout(cmd, &opts.LockTimeout)
	return cmd
}

// runStateMove resolves the target, calls the use case and says what moved.
func runStateMove(ctx context.Context, opts *StateMoveOptions, cfg *config.Config, t deploy.Target) error {
	res, err := opts.Move(ctx, cfg, stateops.StateMoveRequest{Target: t, From: opts.From, To: opts.To, LockTimeout: opts.LockTimeout, Dir: cfg.Dir, Config: cfg})
	if err != nil {
		return err
	}
	for _, m := range res.Moves {
		fmt.Fprintf(opts.IO.Out, "%s -> %s (moved)\n", sanitize.Line(m.From), sanitize.Line(m.To))
	}
	entries := "entries"
	if len(res.Moves) == 1 {
		entries = "entry"
	}
	fmt.Fprintf(opts.IO.ErrOut, "Moved %d state %s: serial %d of %s/%s.\n", len(res.Moves), entries, res.Head.Serial, t.Stack, t.Env)
	for _, a := range res.Undeclared {
		fmt.Fprintf(opts.IO.ErrOut, "Warning: %s is not declared in deployer.yaml: the next deploy deletes it; declare it there (or move it back) first (docs/operations.md#state-mv)\n", sanitize.Line(a))
	}
	return nil
}

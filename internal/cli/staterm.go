package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
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
	"github.com/deployer-dev/deployer/internal/statestore"
)

// StateRmOptions are the inputs of `deployer state rm ADDR...`.
type StateRmOptions struct {
	IO *termui.IOStreams
	// from argv
	Target      app.TargetFlags
	Addresses   []string
	Yes         bool
	LockTimeout time.Duration
	Config      func() (*config.Config, error)
	// Rm is the use case (stateops.Ops.StateRm), bound by NewCmdStateRm.
	Rm func(context.Context, *config.Config, stateops.StateRmRequest) (statestore.Head, error)
}

// NewCmdStateRm returns `deployer state rm ADDR...`; runF replaces
// runStateRm in tests.
func NewCmdStateRm(f *app.Factory, runF func(context.Context, *StateRmOptions) error) *cobra.Command {
	opts := &StateRmOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return app.ProjectConfig(f, "state rm") },
		Rm:     app.UseCase(f, (*stateops.Ops).StateRm),
	}
	cmd := &cobra.Command{
		Use:   "rm ADDR...",
		Short: "Forget components: remove them from the state without deleting them",
		Long: heredoc.Doc(`
			Removes the components SERVICE/COMPONENT from the state without running their delete, under
			the stack lock, as a new serial whose history record (type state-rm) says who removed what.
			What they created stays; a component still in deployer.yaml is created again by the next
			deploy, so remove it from deployer.yaml too (docs/operations.md).`),
		Example: "  deployer state rm -e dev data/db --yes",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			for _, a := range args {
				svc, comp := config.SplitAddress(a)
				if comp == "" {
					return &exitcode.UsageError{Msg: fmt.Sprintf("%q is not a component address: use SERVICE/COMPONENT", a)}
				}
				if err := errorsJoin(config.ValidateName("service", svc), config.ValidateName("component", comp)); err != nil {
					return &exitcode.UsageError{Msg: err.Error()}
				}
			}
			opts.Addresses = args
			return runOr(cmd, opts, runF, app.WithTarget(&opts.Target, opts.Config, runStateRm))
		},
	}
	opts.Target.Bind(cmd, false)
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "remove without asking")
	app.BindLockTimeout(cmd, &opts.LockTimeout)
	return cmd
}

func errorsJoin(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// runStateRm asks (unless --yes), calls the use case and says what it wrote.
func runStateRm(ctx context.Context, opts *StateRmOptions, cfg *config.Config, t deploy.Target) error {
	if !opts.Yes {
		if !opts.IO.CanPrompt() {
			return &exitcode.UsageError{Msg: "state rm needs confirmation but there is no terminal to ask on: pass --yes to proceed"}
		}
		ok, err := opts.IO.Confirm(fmt.Sprintf("Remove %s from the state of %s/%s without deleting them?", strings.Join(opts.Addresses, ", "), t.Stack, t.Env))
		if err != nil || !ok {
			return errOr(err, "state rm cancelled")
		}
	}
	head, err := opts.Rm(ctx, cfg, stateops.StateRmRequest{Target: t, Addresses: opts.Addresses, LockTimeout: opts.LockTimeout})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Removed %s from the state of %s/%s (serial %d); nothing was deleted.\n",
		strings.Join(opts.Addresses, ", "), t.Stack, t.Env, head.Serial)
	return nil
}

// NewCmdStateList returns `deployer state list`: the addresses in the
// state, one a line, sorted (read-only, like state show).
func NewCmdStateList(f *app.Factory) *cobra.Command {
	var target app.TargetFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Print the addresses of the components in the state, one a line",
		Long: heredoc.Doc(`
			Prints SERVICE/COMPONENT of every component in the verified state of the stack/environment,
			sorted, one a line (with --json, a JSON list). Read-only.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := target.ValidateFlags(); err != nil {
				return err
			}
			cfg, t, err := target.Load(func() (*config.Config, error) { return app.ProjectConfig(f, "state list") }, false)
			if err != nil {
				return err
			}
			store, err := f.Store(cmd.Context(), cfg, app.ReadSealed)
			if err != nil {
				return err
			}
			res, err := stateops.ShowState(cmd.Context(), stateops.StateDeps{Store: store, Audit: f.Audit}, stateops.ShowStateRequest{Target: t})
			if err != nil {
				return err
			}
			addrs := slices.Sorted(maps.Keys(res.State.Resources))
			if f.JSON {
				return f.IO.PrintJSON(nonNilList(addrs))
			}
			for _, a := range addrs {
				fmt.Fprintln(f.IO.Out, sanitize.Line(a)) // stored data
			}
			return nil
		},
	}
	target.Bind(cmd, false)
	return cmd
}

func nonNilList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

package cli

import (
	"context"
	"fmt"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/termui"
)

// StacksOptions are the options of `deployer stacks` (docs/many-stacks.md).
type StacksOptions struct {
	IO *termui.IOStreams

	Env   string // -e: resolve references with this environment's overrides
	Graph string // --graph mermaid|dot
	JSON  bool
	// Matrix is --matrix: the GitHub Actions matrix of the run
	// (termui.RenderMatrix), with ChangedSince (--changed-since).
	Matrix       bool
	ChangedSince string
	// Load loads one stack's deployer.yaml (--matrix).
	Load func(path string) (*config.Config, error)

	// Discover finds the stacks under the working directory
	// (stacks.Discover with the app.Factory's loader).
	Discover func(env string) (*stacks.Set, error)
}

// NewCmdStacks returns `deployer stacks`; runF replaces runStacks in tests.
func NewCmdStacks(f *app.Factory, runF func(context.Context, *StacksOptions) error) *cobra.Command {
	opts := &StacksOptions{IO: f.IO, Load: f.StackConfig, Discover: func(env string) (*stacks.Set, error) {
		return stacks.Discover(".", stacks.Options{Env: env, Load: f.StackConfig})
	}}
	cmd := &cobra.Command{
		Use:   "stacks",
		Short: "List the stacks under the working directory in dependency order, with what each reads",
		Long: heredoc.Doc(`
			Finds every deployer.yaml under the working directory (skipping hidden directories such as .git and
			.deployer, node_modules and vendor; a deployer-stacks.yaml there may list or exclude paths) and orders
			the stacks so that each comes after the stacks its StackReference components read: the order of
			plan, deploy and destroy --all (docs/many-stacks.md).`),
		Example: `  deployer stacks
  deployer stacks -e prod --json
  deployer stacks --graph mermaid > stacks.mmd
  deployer stacks --graph dot | dot -Tsvg > stacks.svg
  deployer stacks -e prod --matrix --changed-since origin/main`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Graph != "" && opts.Graph != "mermaid" && opts.Graph != "dot" {
				return &exitcode.UsageError{Msg: fmt.Sprintf("--graph %q: want mermaid or dot", opts.Graph)}
			}
			if opts.Env != "" {
				if err := app.ValidateName("environment", opts.Env); err != nil {
					return err
				}
			}
			if f.ConfigPath != "" {
				return &exitcode.UsageError{Msg: "deployer stacks finds every deployer.yaml under the working directory: drop --config (DEPLOYER_CONFIG)"}
			}
			opts.JSON = f.JSON
			if opts.JSON && opts.Graph != "" {
				return &exitcode.UsageError{Msg: "use either --json or --graph"}
			}
			if err := opts.checkMatrix(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.Matrix {
				return runStacksMatrix(cmd.Context(), opts)
			}
			return runStacks(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Env, "environment", "e", "", "resolve references with this environment's overrides (default: as written)")
	cmd.Flags().StringVar(&opts.Graph, "graph", "", "print the graph as mermaid or dot instead of the table")
	cmd.Flags().BoolVar(&opts.Matrix, "matrix", false, "print the GitHub Actions matrix of the run (needs -e): {\"include\": [{stack, dir, upstream}]}")
	cmd.Flags().StringVar(&opts.ChangedSince, "changed-since", "", "with --matrix: only the stacks changed since git revision REF, and the stacks that read them")
	return cmd
}

func runStacks(opts *StacksOptions) error {
	set, err := opts.Discover(opts.Env)
	if err != nil {
		return err
	}
	if err := set.CheckBackends(); err != nil {
		// Listed all the same (the graph is right); --all runs refuse it.
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s; plan, deploy and destroy --all refuse these stacks until then\n", err)
	}
	return termui.RenderStacks(opts.IO, set, opts.JSON, opts.Graph)
}

// runStacksMatrix prints the stacks of a run as GitHub Actions'
// strategy.matrix (termui.RenderMatrix).
func runStacksMatrix(ctx context.Context, opts *StacksOptions) error {
	sel, err := runner.SelectStacks(ctx, runner.SelectRequest{Root: ".", Env: opts.Env, Op: runner.OpDeploy, ChangedSince: opts.ChangedSince, Load: opts.Load})
	if err != nil {
		return err
	}
	return termui.RenderMatrix(opts.IO, sel, opts.ChangedSince)
}

// checkMatrix refuses --matrix without -e or with --json/--graph, and
// --changed-since without --matrix.
func (o *StacksOptions) checkMatrix() error {
	switch {
	case o.ChangedSince != "" && !o.Matrix:
		return &exitcode.UsageError{Msg: "--changed-since goes with --matrix (plan and deploy take it with --all)"}
	case !o.Matrix:
		return nil
	case o.Env == "":
		return &exitcode.UsageError{Msg: "--matrix needs -e ENV: a run deploys one environment"}
	case o.JSON || o.Graph != "":
		return &exitcode.UsageError{Msg: "--matrix prints JSON already: drop --json and --graph"}
	}
	return nil
}

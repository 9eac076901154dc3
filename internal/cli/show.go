package cli

import (
	"context"
	"fmt"

	"github.com/deployer-dev/deployer/internal/app"

	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/termui"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/plan"
)

// ShowOptions are the options of `deployer show FILE`.
type ShowOptions struct {
	IO   *termui.IOStreams
	File string
	JSON bool
}

// NewCmdShow returns `deployer show FILE`, which prints a plan saved by
// plan --out (as terraform show PLANFILE does); runF replaces runShow in
// tests.
func NewCmdShow(f *app.Factory, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "show FILE",
		Short: "Print a plan saved with plan --out",
		Long: heredoc.Doc(`
			Prints the plan FILE holds as plan printed it (with --json, the plan document), after a line
			naming the stack, environment and state serial it was made for. It reads only the file: no
			deployer.yaml, backend or key is needed. deploy --plan FILE applies it.`),
		Example: `  deployer plan -e prod --out prod.plan
  deployer show prod.plan
  deployer deploy --plan prod.plan`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File, opts.JSON = args[0], f.JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runShow(cmd.Context(), opts)
		},
	}
	return cmd
}

func runShow(_ context.Context, opts *ShowOptions) error {
	p, err := plan.ReadFile(opts.File)
	if err != nil {
		return err
	}
	if !opts.JSON {
		version := ""
		if p.Binding != nil && p.Binding.DeployerVersion != "" {
			version = ", made by deployer " + p.Binding.DeployerVersion
		}
		// The file is foreign data: what it names is printed sanitised.
		fmt.Fprintf(opts.IO.ErrOut, "Saved plan of %s/%s, bound to state serial %d%s. Apply it with: deployer deploy --plan %s\n",
			sanitize.Line(p.Stack), sanitize.Line(p.Environment), p.Serial, sanitize.Line(version), sanitize.Command(opts.File))
	}
	return termui.PlanRenderer(opts.IO, opts.JSON).Render(opts.IO.Out, p)
}

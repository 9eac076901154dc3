package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/plan"
)

// PlanOptions are the flags of `deployer plan` (SPEC 3, 7).
type PlanOptions struct {
	Target           targetFlags
	Out              string
	DetailedExitcode bool
	Destroy          bool
	JSON             bool
}

// NewCmdPlan returns `deployer plan`. runF replaces runPlan in tests.
func NewCmdPlan(f *Factory, runF func(context.Context, *Factory, *PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what deploy would change",
		Example: `  deployer plan -e dev
  deployer plan -e prod --component user-service/api --json
  deployer plan -e prod --out prod.plan && deployer deploy -e prod --plan prod.plan`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			opts.JSON = f.JSON
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runPlan(cmd.Context(), f, opts)
		},
	}
	opts.Target.bind(cmd, true)
	cmd.Flags().StringVar(&opts.Out, "out", "", "save the plan to FILE for deploy --plan")
	cmd.Flags().BoolVar(&opts.DetailedExitcode, "detailed-exitcode", false, "exit 0 when there are no changes, 2 when there are, 1 on error")
	cmd.Flags().BoolVar(&opts.Destroy, "destroy", false, "plan the deletion of everything in scope")
	return cmd
}

func runPlan(ctx context.Context, f *Factory, opts *PlanOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	t, err := opts.Target.resolveWithConfig(cfg)
	if err != nil {
		return err
	}
	svc, err := f.Service(ctx, cfg, EngineOptions{})
	if err != nil {
		return err
	}
	p, err := svc.Plan(ctx, cfg, t, opts.Destroy)
	if err != nil {
		return err
	}
	if opts.Out != "" {
		if err := plan.WriteFile(opts.Out, p); err != nil {
			return fmt.Errorf("save plan: %w", err)
		}
		fmt.Fprintf(f.IO.ErrOut, "Saved the plan to %s (bound to state serial %d). Apply it with: deployer deploy -s %s -e %s --plan %s\n",
			opts.Out, p.Serial, t.Stack, t.Env, opts.Out)
	}
	if err := planRenderer(f, opts.JSON).Render(f.IO.Out, p); err != nil {
		return err
	}
	if opts.DetailedExitcode && p.HasChanges() {
		return &ExitCodeError{Code: 2}
	}
	return nil
}

func planRenderer(f *Factory, asJSON bool) PlanRenderer {
	if asJSON {
		return NewJSONPlanRenderer()
	}
	return NewHumanPlanRenderer(f.IO.ColorOut())
}

func writeJSON(f *Factory, v any) error {
	enc := json.NewEncoder(f.IO.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/plan"
)

// PlanOptions are the flags of `deployer plan` (docs/commands.md, docs/plan.md).
type PlanOptions struct {
	Target           targetFlags
	Out              string
	DetailedExitcode bool
	Destroy          bool
	Preview          bool
	Refresh          bool
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
	cmd.Flags().BoolVar(&opts.Preview, "preview", false, "add Pulumi's resource-level preview (needs the Pulumi CLI)")
	cmd.Flags().BoolVar(&opts.Refresh, "refresh", false, "refresh Pulumi components and report drift from actual_state (needs the Pulumi CLI)")
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
	if opts.Preview || opts.Refresh {
		if err := f.checkEngines(ctx, cfg, t, EngineOptions{}); err != nil {
			return err
		}
	}
	svc, err := f.PlanService(ctx, cfg, EngineOptions{})
	if err != nil {
		return err
	}
	p, err := svc.Plan(ctx, cfg, t, opts.Destroy)
	if err != nil {
		return err
	}
	if opts.Refresh {
		drift, err := svc.Refresh(ctx, cfg, t, p)
		if err != nil {
			return err
		}
		if err := renderDrift(f, drift, opts.JSON); err != nil {
			return err
		}
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
	f.summarize(planSummary(f.command, t, p))
	f.setOutputs(ghactions.Output{Name: "changes", Value: strconv.FormatBool(p.HasChanges())},
		ghactions.Output{Name: "serial", Value: strconv.FormatInt(p.Serial, 10)})
	if opts.Preview {
		text, err := svc.Preview(ctx, cfg, t, p)
		if err != nil {
			return err
		}
		w := f.IO.Out
		if opts.JSON {
			w = f.IO.ErrOut // --json keeps stdout a single JSON document
		}
		fmt.Fprintf(w, "\nPulumi preview:\n%s", text)
	}
	if opts.DetailedExitcode && p.HasChanges() {
		return &ExitCodeError{Code: 2}
	}
	return nil
}

// renderDrift prints plan --refresh's drift report (stderr in --json mode,
// so stdout stays the plan document).
func renderDrift(f *Factory, drift []engine.Drift, asJSON bool) error {
	for i := range drift { // secrets never leave masked (docs/plan.md#secrets)
		d := &drift[i]
		d.ActualState, _ = plan.Mask(d.ActualState).(map[string]any)
		for j := range d.Fields {
			fd := &d.Fields[j]
			fd.Old, fd.New = plan.Mask(fd.Old), plan.Mask(fd.New)
			if key := fd.Path[strings.LastIndex(fd.Path, ".")+1:]; plan.IsSecretKey(key) {
				fd.Old, fd.New, fd.Sensitive = plan.Masked, plan.Masked, true
			}
		}
	}
	if asJSON {
		enc := json.NewEncoder(f.IO.ErrOut)
		return enc.Encode(map[string]any{"drift": drift})
	}
	w := f.IO.Out
	if len(drift) == 0 {
		fmt.Fprintln(w, "No drift: the cloud matches actual_state.")
		return nil
	}
	fmt.Fprintf(w, "Drift between actual_state and the cloud (%d components):\n", len(drift))
	for _, d := range drift {
		if d.Missing {
			fmt.Fprintf(w, "  ! %s: its resources no longer exist\n", d.Address)
			continue
		}
		fmt.Fprintf(w, "  ! %s\n", d.Address)
		for _, fd := range d.Fields {
			fmt.Fprintf(w, "      %s: %v -> %v\n", fd.Path, fd.Old, fd.New)
		}
	}
	fmt.Fprintln(w)
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

package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// DeployOptions are the flags of `deployer deploy` and `deployer destroy`.
type DeployOptions struct {
	Target        targetFlags
	PlanFile      string
	Yes           bool
	LockTimeout   time.Duration
	InstallPulumi bool
	Destroy       bool
	JSON          bool
	// Parallelism is --parallelism; 0 when not given (DEPLOYER_PARALLELISM,
	// then deployer.yaml's parallelism:, then 10).
	Parallelism int
}

// NewCmdDeploy returns `deployer deploy`.
func NewCmdDeploy(f *Factory, runF func(context.Context, *Factory, *DeployOptions) error) *cobra.Command {
	opts := &DeployOptions{}
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Lock, plan, apply and save the state of a stack/environment",
		Example: `  deployer deploy -e dev --yes
  deployer deploy -e prod --component user-service/api --lock-timeout 10m
  deployer deploy -e prod --plan prod.plan --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			if err := opts.checkParallelism(cmd); err != nil {
				return err
			}
			opts.JSON = f.JSON
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runDeploy(cmd.Context(), f, opts)
		},
	}
	bindApplyFlags(cmd, opts)
	cmd.Flags().StringVar(&opts.PlanFile, "plan", "", "apply a plan saved with plan --out (refused if the state moved on)")
	return cmd
}

// NewCmdDestroy returns `deployer destroy`.
func NewCmdDestroy(f *Factory, runF func(context.Context, *Factory, *DeployOptions) error) *cobra.Command {
	opts := &DeployOptions{Destroy: true}
	cmd := &cobra.Command{
		Use:   "destroy",
		Short: "Delete every component in scope and record it in the state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			if err := opts.checkParallelism(cmd); err != nil {
				return err
			}
			opts.JSON = f.JSON
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runDeploy(cmd.Context(), f, opts)
		},
	}
	bindApplyFlags(cmd, opts)
	return cmd
}

func bindApplyFlags(cmd *cobra.Command, opts *DeployOptions) {
	opts.Target.bind(cmd, true)
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "apply without asking (required without a terminal)")
	cmd.Flags().DurationVar(&opts.LockTimeout, "lock-timeout", 0, "wait up to DUR for a held lock (0: fail at once)")
	cmd.Flags().BoolVar(&opts.InstallPulumi, "install-pulumi", false, "install the Pulumi CLI when it is missing")
	cmd.Flags().IntVar(&opts.Parallelism, "parallelism", 0, "apply at most N independent components at once (default 10; 1 applies one at a time)")
}

// checkParallelism refuses --parallelism below 1.
func (o *DeployOptions) checkParallelism(cmd *cobra.Command) error {
	if cmd.Flags().Changed("parallelism") && o.Parallelism < 1 {
		return &UsageError{Msg: fmt.Sprintf("--parallelism must be at least 1, got %d", o.Parallelism)}
	}
	return nil
}

func runDeploy(ctx context.Context, f *Factory, opts *DeployOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	t, err := opts.Target.resolveWithConfig(cfg)
	if err != nil {
		return err
	}
	var saved *plan.Plan
	if opts.PlanFile != "" {
		if saved, err = plan.ReadFile(opts.PlanFile); err != nil {
			return err
		}
	}
	if !opts.Yes && !f.IO.CanPrompt() {
		verb := "deploy"
		if opts.Destroy {
			verb = "destroy"
		}
		return &UsageError{Msg: verb + " needs confirmation but there is no terminal to ask on: pass --yes to proceed"}
	}
	eopts := EngineOptions{InstallPulumi: opts.InstallPulumi}
	if err := f.checkEngines(ctx, cfg, t, eopts); err != nil {
		return err
	}
	svc, err := f.Service(ctx, cfg, eopts)
	if err != nil {
		return err
	}
	// The plan is data of the command: stdout in human mode, and part of
	// the JSON result in --json mode.
	renderTo := f.IO.Out
	if opts.JSON {
		renderTo = f.IO.ErrOut
	}
	if opts.Parallelism > 0 {
		cfg.Parallelism = opts.Parallelism
	}
	req := deploy.ApplyRequest{
		Config: cfg, Target: t, Destroy: opts.Destroy, SavedPlan: saved, LockTimeout: opts.LockTimeout,
		Parallelism: cfg.Parallelism,
		ShowPlan: func(p *plan.Plan) error {
			if opts.JSON {
				return nil
			}
			return NewHumanPlanRenderer(f.IO.ColorOut()).Render(renderTo, p)
		},
	}
	if !opts.Yes {
		req.Confirm = func(p *plan.Plan) (bool, error) {
			verb := "Apply these changes"
			if opts.Destroy {
				verb = "Destroy these components"
			}
			return f.IO.Confirm(fmt.Sprintf("%s to %s/%s?", verb, t.Stack, t.Env))
		}
	}
	out, err := svc.Apply(ctx, req)
	f.reportDeploy(t, out, err)
	if opts.JSON && out != nil {
		if jerr := writeJSON(f, deployResultJSON(out, err)); jerr != nil {
			return jerr
		}
	} else if out != nil && out.Plan != nil {
		printDeploySummary(f, t, out, err)
	}
	return err
}

type deployJSON struct {
	Stack        string     `json:"stack"`
	Environment  string     `json:"environment"`
	Changed      bool       `json:"changed"`
	DeploymentID string     `json:"deployment_id,omitempty"`
	Status       string     `json:"status"`
	Serial       int64      `json:"serial,omitempty"`
	Plan         *plan.Plan `json:"plan,omitempty"`
	// Unchanged lists the re-evaluated components left alone because their
	// inputs came out equal (docs/plan.md "Changes flow to dependents").
	Unchanged []string `json:"unchanged,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func deployResultJSON(out *deploy.Outcome, err error) deployJSON {
	j := deployJSON{Status: "no-changes", Plan: out.Plan, Unchanged: out.Unchanged}
	if out.Plan != nil {
		j.Stack, j.Environment, j.Changed = out.Plan.Stack, out.Plan.Environment, out.Plan.HasChanges()
	}
	if out.Deployment.DeploymentID != "" {
		j.DeploymentID, j.Status, j.Serial = out.Deployment.DeploymentID, out.Deployment.Status, out.Head.Serial
	}
	if err != nil {
		j.Error = err.Error()
		if j.Status == "no-changes" {
			j.Status = "failed"
		}
	}
	return j
}

// failedSteps counts the components whose change failed or was cancelled.
func failedSteps(results []engine.Result) int {
	n := 0
	for _, r := range results {
		if r.Status != "ready" && r.Status != "deleted" {
			n++
		}
	}
	return n
}

func printDeploySummary(f *Factory, t deploy.Target, out *deploy.Outcome, err error) {
	if !out.Plan.HasChanges() || out.Deployment.DeploymentID == "" {
		return
	}
	d := out.Deployment
	c := d.ResourcesChanged
	if err != nil && errors.Is(err, deploy.ErrDeclined) {
		return
	}
	replaced := ""
	if out.Replaced > 0 {
		replaced = fmt.Sprintf(", %d replaced", out.Replaced)
	}
	fmt.Fprintf(f.IO.Out, "\nDeployment %s %s in %.1fs: %d created, %d updated%s, %d deleted",
		d.DeploymentID, d.Status, d.DurationSeconds, c.Created, c.Updated-out.Replaced, replaced, c.Deleted)
	if n := len(out.Unchanged); n > 0 {
		fmt.Fprintf(f.IO.Out, ", %d re-evaluated and unchanged", n)
	}
	if n := failedSteps(out.Results); n > 0 || d.Status != "success" {
		fmt.Fprintf(f.IO.Out, ", %d failed", n)
		if skipped := len(out.Plan.Changes()) - len(out.Results) - len(out.Unchanged); skipped > 0 {
			fmt.Fprintf(f.IO.Out, ", %d not started", skipped)
		}
	}
	fmt.Fprint(f.IO.Out, ".")
	if out.Head.Serial > 0 {
		fmt.Fprintf(f.IO.Out, " State %s/%s is at serial %d.", t.Stack, t.Env, out.Head.Serial)
	}
	fmt.Fprintln(f.IO.Out)
}

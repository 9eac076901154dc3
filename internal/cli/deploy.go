package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engines"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/termui"
)

// DeployOptions are the options of `deployer deploy` and `deployer destroy`.
type DeployOptions struct {
	IO *termui.IOStreams
	// app.StackOptions are the target, --all and --json.
	app.StackOptions

	// From argv.
	PlanFile      string
	Yes           bool
	LockTimeout   time.Duration
	InstallPulumi bool
	// Grace is --grace: SIGTERM to SIGKILL for Command components without
	// command.grace.
	Grace   time.Duration
	Destroy bool
	// Parallelism is --parallelism; 0 when not given (DEPLOYER_PARALLELISM,
	// then deployer.yaml's parallelism:, then 10).
	Parallelism int
	Policy      app.PolicyFlags
	// WithDependents is destroy --with-dependents.
	WithDependents bool
	// Run is --run-id and its flags (deploy only).
	Run app.RunFlags
	// RefreshOnly is deploy --refresh-only: record what is live, run
	// nothing else (docs/operations.md#refresh-only).
	RefreshOnly bool
	// Replace is deploy --replace ADDR (repeatable): replace the
	// component though its config does not force it.
	Replace []string
	// Import is deployer import's ADDR and ID (NewCmdImport); zero for
	// deploy and destroy.
	Import deploy.ImportTarget

	// Apply is the use case, deploy.Service.Apply with ui (bound by
	// NewCmdDeploy; a run test sets a fake). It reports the run itself
	// (deploy.Reporter: the GitHub Actions job summary, outputs and
	// annotations, docs/github-actions.md).
	Apply func(ctx context.Context, req deploy.ApplyRequest, ui deploy.UI, eng app.EngineOptions) (*deploy.Outcome, error)
	// Refresh is the refresh-only use case (deploy --refresh-only).
	Refresh RefreshOnlyFunc
	// RecordRunFailure records, for a --run-id deploy that fails after
	// its config loaded and before Apply runs (a policy that does not
	// compile, a saved plan it cannot read, --yes missing), the failure
	// for the run: deploy.Service.RecordRunFailure. Nil records nothing.
	RecordRunFailure func(ctx context.Context, req deploy.RunFailureRequest)
}

// NewCmdDeploy returns `deployer deploy`; runF replaces runDeploy in tests.
func NewCmdDeploy(f *app.Factory, runF func(context.Context, *DeployOptions) error) *cobra.Command {
	cmd, opts := newApplyCmd(f, runF, false, &cobra.Command{
		Use:   "deploy",
		Short: "Lock, plan, apply and save the state of a stack/environment",
		Long: heredoc.Doc(`
			Takes the lock of the level chosen (stack, or --service / --component), loads and verifies the
			state, plans, asks for confirmation (--yes without a terminal), applies in dependency order and
			writes the new state with a history snapshot and a deployment record, then releases the lock.
			--plan FILE applies a plan saved by plan --out: its stack and environment come from the file and
			it asks nothing (the saved plan was the review; docs/plan.md#saved-plans---out-deploy---plan).
			The steps, Ctrl-C and failures: docs/commands.md#deploy.`),
		Example: `  deployer deploy -e dev --yes
  deployer deploy -e prod --component user-service/api --lock-timeout 10m
  deployer deploy --plan prod.plan
  deployer deploy -e dev --all --yes`,
	})
	cmd.Flags().StringVar(&opts.PlanFile, "plan", "", "apply a plan saved with plan --out, for its stack and environment, without asking (refused if the state moved on)")
	opts.Run.Bind(cmd)
	cmd.Flags().BoolVar(&opts.RefreshOnly, "refresh-only", false, "read what is live, show how it differs from the state and, once confirmed, record it as the state, running nothing else (docs/operations.md#refresh-only)")
	cmd.Flags().StringArrayVar(&opts.Replace, "replace", nil, "replace component SERVICE/NAME (delete and create, or as its kind replaces) though its config does not force it; repeatable (docs/operations.md#replace)")
	return cmd
}

// newApplyCmd completes cmd (its Use, Short, Long and Example set) as
// deploy, or as destroy when destroy is set: no arguments, the run through
// runF (runDeploy when nil) and the flags both share (bindApplyFlags).
// It returns cmd and its options, for the flags of one command alone.
func newApplyCmd(f *app.Factory, runF func(context.Context, *DeployOptions) error, destroy bool, cmd *cobra.Command) (*cobra.Command, *DeployOptions) {
	opts := newDeployOptions(f, destroy)
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return opts.runE(cmd, f, runF)
	}
	bindApplyFlags(cmd, opts)
	return cmd, opts
}

// NewCmdDestroy returns `deployer destroy`; runF replaces runDeploy in tests.
func NewCmdDestroy(f *app.Factory, runF func(context.Context, *DeployOptions) error) *cobra.Command {
	cmd, opts := newApplyCmd(f, runF, true, &cobra.Command{
		Use:   "destroy",
		Short: "Delete every component in scope and record it in the state",
		Long: heredoc.Doc(`
			Deletes every component in scope, dependents first (independent ones at once), under the lock,
			and records the deployment in the state's history. It shows what it deletes, then asks (--yes
			without a terminal): only yes or the stack's name, typed in full, confirms.`),
	})
	cmd.Flags().BoolVar(&opts.WithDependents, "with-dependents", false, "with --service/--component: destroy the components that depend on them too, dependents first (without it such a destroy is refused, exit 6)")
	return cmd
}

// newDeployOptions binds the use case of deploy (or destroy) to f.
func newDeployOptions(f *app.Factory, destroy bool) *DeployOptions {
	return &DeployOptions{
		IO:           f.IO,
		StackOptions: app.NewStackOptions(f),
		Destroy:      destroy,
		Policy:       app.PolicyFlags{Identify: app.OverrideIdentity(f.Getenv)},
		Apply: func(ctx context.Context, req deploy.ApplyRequest, ui deploy.UI, eng app.EngineOptions) (*deploy.Outcome, error) {
			svc, err := f.Service(ctx, req.Config, app.ServiceOptions{EngineOptions: eng, UI: ui})
			if err != nil {
				return nil, err
			}
			return svc.Apply(ctx, req)
		},
		Refresh: bindRefreshOnly(f, false),
		RecordRunFailure: func(ctx context.Context, req deploy.RunFailureRequest) {
			svc, err := f.Service(ctx, req.Config, app.ServiceOptions{})
			if err != nil {
				fmt.Fprintf(f.IO.ErrOut, "warning: could not record the failure of this deploy for run %s: %v; the stacks of the run that wait for %s wait until their --wait-timeout\n",
					req.Run.ID, err, req.Target.Stack)
				return
			}
			svc.RecordRunFailure(ctx, req)
		},
	}
}

// runE validates the flags, then runs the command.
func (o *DeployOptions) runE(cmd *cobra.Command, f *app.Factory, runF func(context.Context, *DeployOptions) error) error {
	if o.PlanFile != "" {
		for _, n := range []string{"service", "component", "exclude"} {
			if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
				return &exitcode.UsageError{Msg: fmt.Sprintf("--%s cannot be used with --plan: a saved plan applies its own scope (make the plan with plan --%s ... --out FILE)", n, n)}
			}
		}
	}
	if t := o.Target; o.WithDependents && t.Service == "" && t.Component == "" && len(t.Components) == 0 && len(t.Exclude) == 0 {
		return &exitcode.UsageError{Msg: "--with-dependents widens a destroy of some components: name them with --component or --service, or leave some out with --exclude (a destroy of the whole stack has no dependents left out)"}
	}
	if len(o.Replace) > 0 && o.PlanFile != "" {
		return &exitcode.UsageError{Msg: "--replace cannot be used with --plan: the saved plan's replacements apply (make it with plan --replace ADDR --out FILE)"}
	}
	if err := o.readSaved(); err != nil {
		return err
	}
	if err := o.Target.ValidateFlags(); err != nil {
		return err
	}
	if err := o.checkParallelism(cmd); err != nil {
		return err
	}
	if o.Grace <= 0 || o.Grace > engines.MaxGrace {
		return &exitcode.UsageError{Msg: fmt.Sprintf("--grace must be positive and at most %s, got %s", engines.MaxGrace, o.Grace)}
	}
	if err := o.Check(cmd, f, "plan", "override-policy", "reason", "run-id", "run-attempt", "upstream", "wait-timeout", "refresh-only"); err != nil {
		return err
	}
	if err := refuseWithRefreshOnly(cmd, o.RefreshOnly, "plan", "override-policy", "reason", "run-id", "parallelism", "replace"); err != nil {
		return err
	}
	if len(o.Replace) > 0 && o.All.All {
		return &exitcode.UsageError{Msg: "--replace names components of one stack: it cannot be used with --all"}
	}
	if err := o.Run.Check(cmd, f.Getenv); err != nil {
		return err
	}
	return runOr(cmd, o, runF, runDeploy)
}

func bindApplyFlags(cmd *cobra.Command, opts *DeployOptions) {
	opts.Bind(cmd, true)
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "apply without asking (required without a terminal)")
	app.BindLockTimeout(cmd, &opts.LockTimeout)
	cmd.Flags().BoolVar(&opts.InstallPulumi, "install-pulumi", false, "install the Pulumi CLI when it is missing")
	app.BindPolicyFlags(cmd, &opts.Policy, true)
	cmd.Flags().DurationVar(&opts.Grace, "grace", engines.DefaultGrace, "time a cancelled Command component has between SIGTERM and SIGKILL to clean up, where command.grace sets none")
	cmd.Flags().IntVar(&opts.Parallelism, "parallelism", 0, "apply at most N independent components at once (default 10; 1 applies one at a time; with --all, in each stack)")
}

// checkParallelism refuses --parallelism below 1.
func (o *DeployOptions) checkParallelism(cmd *cobra.Command) error {
	if cmd.Flags().Changed("parallelism") && o.Parallelism < 1 {
		return &exitcode.UsageError{Msg: fmt.Sprintf("--parallelism must be at least 1, got %d", o.Parallelism)}
	}
	return nil
}

// runDeploy resolves the target, asks (unless --yes), calls the use case
// and renders its outcome. It uses only opts. A --run-id deploy that fails
// before the use case runs records its failure for the run
// (RecordRunFailure); the use case records its own.
func runDeploy(ctx context.Context, opts *DeployOptions) (err error) {
	if opts.All.All {
		op := runner.OpDeploy
		if opts.Destroy {
			op = runner.OpDestroy
		}
		return opts.RunAll(ctx, app.AllRequest{Op: op, Env: opts.Target.Env, EnvFromVar: opts.Target.EnvFromVar, Flags: opts.All, Parallelism: opts.Parallelism,
			LockTimeout: opts.LockTimeout, Yes: opts.Yes, InstallPulumi: opts.InstallPulumi, Grace: opts.Grace, JSON: opts.JSON, Policy: opts.Policy})
	}
	cfg, t, err := opts.Load()
	if err != nil {
		return err
	}
	if opts.RefreshOnly {
		return opts.refreshOnly(ctx, cfg, t)
	}
	run, err := opts.Run.Request(t.Stack)
	if err != nil {
		return err
	}
	applying := false
	if run != nil && opts.RecordRunFailure != nil {
		defer func() {
			if err != nil && !applying {
				opts.RecordRunFailure(ctx, deploy.RunFailureRequest{Config: cfg, Target: t, Run: run, Err: err, LockTimeout: opts.LockTimeout})
			}
		}()
	}
	if err := opts.Policy.Validate(); err != nil {
		return err
	}
	check, err := opts.Policy.Check(ctx, cfg)
	if err != nil {
		return err
	}
	saved, t, err := opts.savedPlan(t)
	if err != nil {
		return err
	}
	// A saved plan was the review: applying it asks nothing, as terraform
	// apply PLANFILE does not.
	ask := !opts.Yes && saved == nil
	if ask && !opts.IO.CanPrompt() {
		return &exitcode.UsageError{Msg: opts.verb() + " needs confirmation but there is no terminal to ask on: pass --yes to proceed"}
	}
	req := opts.applyRequest(cfg, t, saved, check, run)
	applying = true
	out, err := opts.Apply(ctx, req, opts.ui(t, ask), app.EngineOptions{InstallPulumi: opts.InstallPulumi, Grace: opts.Grace})
	err = opts.render(t, out, err)
	switch {
	case run == nil:
		return err
	case opts.JSON:
		return app.SkippedExit(err)
	}
	return app.RunOutcome(opts.IO.Out, t, out, err)
}

// applyRequest is the use case's request of a deploy (or destroy) of t.
func (opts *DeployOptions) applyRequest(cfg *config.Config, t deploy.Target, saved *plan.Plan, check *deploy.PolicyCheck, run *deploy.Run) deploy.ApplyRequest {
	return deploy.ApplyRequest{
		Config: cfg, Target: t, Destroy: opts.Destroy, SavedPlan: saved, LockTimeout: opts.LockTimeout,
		Parallelism: opts.Parallelism, Policy: check, WithDependents: opts.WithDependents, Run: run, Import: opts.Import.OrNil(),
		Replace: opts.Replace,
	}
}

// deployUI is the use case's UI of a deploy (or destroy) of t: the plan
// shown on stdout unless --json, and a confirmation asked when ask (else
// --yes); the session's live progress hears the steps.
type deployUI struct {
	deploy.NoUI
	opts *DeployOptions
	t    deploy.Target
	ask  bool
}

func (opts *DeployOptions) ui(t deploy.Target, ask bool) deploy.UI {
	return deployUI{opts: opts, t: t, ask: ask}
}

// ShowPlan renders p: the plan is data of the command, stdout in human
// mode, and part of the JSON result in --json mode.
func (u deployUI) ShowPlan(p *plan.Plan) error {
	if u.opts.JSON {
		return nil
	}
	return planview.NewHuman(u.opts.IO.ColorOut(), u.opts.IO.Mask).Render(u.opts.IO.Out, p)
}

func (u deployUI) Confirm(p *plan.Plan) (bool, error) {
	switch {
	case !u.ask:
		return true, nil
	case u.opts.Destroy:
		return app.ConfirmDestroy(u.opts.IO, fmt.Sprintf("Destroy these components from %s/%s?", u.t.Stack, u.t.Env), u.t.Stack)
	}
	return u.opts.IO.Confirm(fmt.Sprintf("Apply these changes to %s/%s?", u.t.Stack, u.t.Env))
}

// verb names the command opts runs: deploy, destroy or import.
func (o *DeployOptions) verb() string {
	switch {
	case o.Destroy:
		return "destroy"
	case o.Import.Address != "":
		return "import"
	}
	return "deploy"
}

// refreshOnly runs deploy --refresh-only of t (docs/operations.md#refresh-only).
func (o *DeployOptions) refreshOnly(ctx context.Context, cfg *config.Config, t deploy.Target) error {
	return refreshOnlyRun{IO: o.IO, JSON: o.JSON, Record: true, Yes: o.Yes, Run: o.Refresh,
		Engine: app.EngineOptions{InstallPulumi: o.InstallPulumi, Grace: o.Grace}}.
		run(ctx, deploy.RefreshOnlyRequest{Config: cfg, Target: t, LockTimeout: o.LockTimeout})
}

// readSaved takes the defaults of -s and -e from --plan FILE when they are
// not given (nothing without --plan).
func (o *DeployOptions) readSaved() error {
	if o.PlanFile == "" || o.All.All || (o.Target.Env != "" && o.Target.Stack != "") {
		return nil
	}
	saved, err := plan.ReadFile(o.PlanFile)
	if err != nil {
		return err
	}
	if o.Target.Env == "" {
		o.Target.Env = saved.Environment
	}
	if o.Target.Stack == "" {
		o.Target.Stack = saved.Stack
	}
	return nil
}

// savedPlan returns the plan of --plan FILE (nil without one); the saved
// plan binds its targets (docs/plan.md "Saved plans"): a plan of another
// stack or environment is refused as such, and without target flags,
// deploy --plan applies the plan's scope, so t comes back with it.
func (o *DeployOptions) savedPlan(t deploy.Target) (*plan.Plan, deploy.Target, error) {
	if o.PlanFile == "" {
		return nil, t, nil
	}
	saved, err := plan.ReadFile(o.PlanFile)
	if err != nil {
		return nil, t, err
	}
	if saved.Stack != t.Stack || saved.Environment != t.Env {
		return nil, t, &exitcode.UsageError{Msg: fmt.Sprintf("%s is a plan for %s/%s, not %s/%s: deploy it without -s and -e (deployer deploy --plan %s), or make a plan of %s/%s (deployer plan -s %s -e %s --out FILE)",
			o.PlanFile, saved.Stack, saved.Environment, t.Stack, t.Env, o.PlanFile, t.Stack, t.Env, t.Stack, t.Env)}
	}
	if t.Scope() == "" {
		t = t.WithScope(saved.Scope)
	}
	return saved, t, nil
}

// render shows the outcome of a deploy or destroy of t
// (termui.RenderDeploy); it returns err.
func (o *DeployOptions) render(t deploy.Target, out *deploy.Outcome, err error) error {
	return termui.RenderDeploy(o.IO, o.JSON, t, out, err)
}

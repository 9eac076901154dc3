package cli

import (
	"context"
	"fmt"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/termui"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// PlanOptions are the options of `deployer plan` (docs/commands.md, docs/plan.md).
type PlanOptions struct {
	IO *termui.IOStreams
	// app.StackOptions are the target, --all and --json.
	app.StackOptions

	// From argv.
	Out              string
	DetailedExitcode bool
	// Replace is plan --replace ADDR (repeatable).
	Replace []string
	Destroy bool
	Preview bool
	Refresh bool
	// RefreshOnly is plan --refresh-only: what deploy --refresh-only
	// would record (docs/operations.md#refresh-only).
	RefreshOnly   bool
	GitHubComment bool
	// RunID is --run-id: the plan is one job of a matrix run, and its
	// comment (--github-comment) is this stack's section of the run's
	// one comment (docs/many-stacks.md#pull-request-comment-of-a-matrix-run).
	RunID  string
	Policy app.PolicyFlags

	// Plan, DetectDrift and PreviewEngines are the use cases
	// (deploy.Service's Plan, Refresh and Preview, on backends opened once
	// without the lock backend); a run test sets fakes. With
	// req.CheckEngines (--preview, --refresh) Plan runs the engines'
	// preflight first. Plan, or with --refresh DetectDrift, reports the
	// plan itself (deploy.Reporter: the GitHub Actions job summary and
	// outputs, the drift's annotations, and with --github-comment the pull
	// request comment; docs/github-actions.md).
	Plan           func(ctx context.Context, req deploy.PlanRequest) (*plan.Plan, error)
	DetectDrift    func(ctx context.Context, cfg *config.Config, t deploy.Target, p *plan.Plan) ([]engine.Drift, error)
	PreviewEngines func(ctx context.Context, cfg *config.Config, t deploy.Target, p *plan.Plan) (string, error)
	// RefreshOnlyPlan is the refresh-only use case, recording nothing.
	RefreshOnlyPlan RefreshOnlyFunc
	// Mask hides every known secret value in the saved plan file (--out):
	// the process's Masker. Nil masks nothing.
	Mask func(string) string
	// configFlag is "--config PATH " when --config was given, for the
	// command that applies a saved plan; "" otherwise.
	configFlag string
}

// NewCmdPlan returns `deployer plan`; runF replaces runPlan in tests.
func NewCmdPlan(f *app.Factory, runF func(context.Context, *PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{IO: f.IO, StackOptions: app.NewStackOptions(f), configFlag: configFlag(f.ConfigPath)}
	opts.useCases(f)
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what deploy would change",
		Long: heredoc.Doc(`
			Diffs deployer.yaml against the state of the stack/environment and shows the changes in
			dependency order. No lock is taken (like terraform plan -lock=false; deploy plans again under
			its lock) and nothing is written: plan works with a role that may only read the state.
			--preview adds Pulumi's resource-level preview; --refresh reads what is live (the Pulumi
			components' real state, and the JSON of Command components' command.read) and reports drift
			from actual_state, exiting 2 on drift with --detailed-exitcode (--preview and Pulumi's refresh
			need the Pulumi CLI; --refresh updates Pulumi's own checkpoint under stacks/S/E/pulumi/, never
			deployer's state). --out saves the plan for deploy --plan FILE, which applies it to the stack and
			environment it was made for without asking again; deployer show FILE prints it.`),
		Example: `  deployer plan -e dev
  deployer plan -e prod --component user-service/api --json
  deployer plan -e prod --out prod.plan && deployer deploy --plan prod.plan
  deployer plan -e dev --all --changed-since origin/main --detailed-exitcode`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			if err := opts.Check(cmd, f, "out", "preview", "refresh", "destroy", "run-id", "refresh-only"); err != nil {
				return err
			}
			if len(opts.Replace) > 0 && (opts.Destroy || opts.All.All) {
				return &exitcode.UsageError{Msg: "--replace cannot be used with --destroy or --all"}
			}
			if err := refuseWithRefreshOnly(cmd, opts.RefreshOnly, "out", "preview", "refresh", "destroy", "run-id", "github-comment", "replace"); err != nil {
				return err
			}
			if err := app.CheckRunID(opts.RunID); err != nil {
				return err
			}
			return runOr(cmd, opts, runF, runPlan)
		},
	}
	opts.Bind(cmd, false)
	cmd.Flags().StringVar(&opts.Out, "out", "", "save the plan to FILE for deploy --plan")
	cmd.Flags().BoolVar(&opts.DetailedExitcode, "detailed-exitcode", false, "exit 0 when there are no changes, 2 when there are, 1 on error")
	cmd.Flags().BoolVar(&opts.Destroy, "destroy", false, "plan the deletion of everything in scope")
	cmd.Flags().StringArrayVar(&opts.Replace, "replace", nil, "plan to replace component SERVICE/NAME though its config does not force it; repeatable (docs/operations.md#replace)")
	cmd.Flags().BoolVar(&opts.Preview, "preview", false, "add Pulumi's resource-level preview (needs the Pulumi CLI)")
	cmd.Flags().BoolVar(&opts.GitHubComment, "github-comment", false, "post the plan as a comment on the workflow run's pull request, updated in place on each run (GitHub Actions, GITHUB_TOKEN; with --all: one comment for every stack)")
	cmd.Flags().StringVar(&opts.RunID, "run-id", "", "plan as one job of the CI run ID (a matrix job): with --github-comment, the plan is this stack's section of the run's one comment (docs/many-stacks.md)")
	app.BindPolicyFlags(cmd, &opts.Policy, false)
	cmd.Flags().BoolVar(&opts.Refresh, "refresh", false, "read what is live (Pulumi components, Command components with command.read) and report drift from actual_state")
	cmd.Flags().BoolVar(&opts.RefreshOnly, "refresh-only", false, "show what deploy --refresh-only would record: how what is live differs from the state (docs/operations.md#refresh-only)")
	return cmd
}

// useCases binds plan's use cases to f: the backends are opened once, on
// the first call, without the lock backend (a plan takes no lock).
func (o *PlanOptions) useCases(f *app.Factory) {
	var svc *deploy.Service
	service := func(ctx context.Context, cfg *config.Config) (*deploy.Service, error) {
		if svc != nil {
			return svc, nil
		}
		s, err := f.Service(ctx, cfg, app.ServiceOptions{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		svc = s
		return s, nil
	}
	o.Plan = func(ctx context.Context, req deploy.PlanRequest) (*plan.Plan, error) {
		s, err := service(ctx, req.Config)
		if err != nil {
			return nil, err
		}
		return s.Plan(ctx, req)
	}
	o.DetectDrift = func(ctx context.Context, cfg *config.Config, t deploy.Target, p *plan.Plan) ([]engine.Drift, error) {
		s, err := service(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return s.Refresh(ctx, deploy.RefreshRequest{Config: cfg, Target: t, Plan: p, Review: o.review()})
	}
	o.PreviewEngines = func(ctx context.Context, cfg *config.Config, t deploy.Target, p *plan.Plan) (string, error) {
		s, err := service(ctx, cfg)
		if err != nil {
			return "", err
		}
		return s.Preview(ctx, deploy.PreviewRequest{Config: cfg, Target: t, Plan: p})
	}
	o.RefreshOnlyPlan = bindRefreshOnly(f, true)
	o.Mask = f.Masker.Mask
}

// review is what --github-comment and --run-id ask of the plan's reporters.
func (o *PlanOptions) review() deploy.Review {
	return deploy.Review{Comment: o.GitHubComment, RunID: o.RunID}
}

// configFlag is the --config flag that names path again in a command
// deployer suggests; "" for the default ./deployer.yaml.
func configFlag(path string) string {
	if path == "" {
		return ""
	}
	return "--config " + path + " "
}

// runPlan plans, reports drift (--refresh), saves the plan (--out), renders
// it and adds the engines' own previews (--preview). It uses only opts.
func runPlan(ctx context.Context, opts *PlanOptions) error {
	if opts.All.All {
		return opts.RunAll(ctx, app.AllRequest{Op: runner.OpPlan, Env: opts.Target.Env, EnvFromVar: opts.Target.EnvFromVar, Flags: opts.All,
			DetailedExitcode: opts.DetailedExitcode, JSON: opts.JSON, GitHubComment: opts.GitHubComment, Policy: opts.Policy})
	}
	cfg, t, err := opts.Load()
	if err != nil {
		return err
	}
	if opts.RefreshOnly {
		return refreshOnlyRun{IO: opts.IO, JSON: opts.JSON, Run: opts.RefreshOnlyPlan, DetailedExitcode: opts.DetailedExitcode}.run(ctx, deploy.RefreshOnlyRequest{Config: cfg, Target: t})
	}
	check, err := opts.Policy.Check(ctx, cfg)
	if err != nil {
		return err
	}
	p, err := opts.Plan(ctx, deploy.PlanRequest{Config: cfg, Target: t, Destroy: opts.Destroy, CheckEngines: opts.Preview || opts.Refresh, Policy: check,
		Save: opts.Out != "", Replace: opts.Replace, Refresh: opts.Refresh, Review: opts.review()})
	if err != nil {
		return err
	}
	var drift []engine.Drift
	if opts.Refresh {
		drift, err = opts.DetectDrift(ctx, cfg, t, p)
		if err != nil {
			return err
		}
		if err := termui.RenderDrift(opts.IO, drift, opts.JSON); err != nil {
			return err
		}
	}
	if opts.Out != "" {
		if err := plan.WriteFile(opts.Out, p, opts.Mask); err != nil {
			return fmt.Errorf("save plan: %w", err)
		}
		fmt.Fprintf(opts.IO.ErrOut, "Saved the plan of %s/%s to %s (bound to state serial %d). Apply it with: deployer %sdeploy --plan %s\n",
			t.Stack, t.Env, opts.Out, p.Serial, opts.configFlag, opts.Out)
	}
	if len(drift) > 0 && !p.HasChanges() && !opts.JSON {
		// "Infrastructure matches the configuration" would contradict the
		// drift just printed (docs/plan.md#drift).
		fmt.Fprintln(opts.IO.Out, planview.NoChangesButDrift)
	} else if err := termui.PlanRenderer(opts.IO, opts.JSON).Render(opts.IO.Out, p); err != nil {
		return err
	}
	if opts.Preview {
		text, err := opts.PreviewEngines(ctx, cfg, t, p)
		if err != nil {
			return err
		}
		w := opts.IO.Out
		if opts.JSON {
			w = opts.IO.ErrOut // --json keeps stdout a single JSON document
		}
		fmt.Fprintf(w, "\n%s", text)
	}
	// A deny is what --detailed-exitcode reports first: the plan cannot be
	// deployed as it is (exit 5, docs/exit-codes.md).
	if d := p.Policy.Denied(); opts.DetailedExitcode && len(d) > 0 {
		return &policy.DeniedError{Results: d}
	}
	// Drift is a difference like a change: 2, as terraform plan
	// -refresh-only -detailed-exitcode exits.
	if opts.DetailedExitcode && (p.HasChanges() || len(drift) > 0) {
		return &exitcode.ExitCodeError{Code: 2}
	}
	return nil
}

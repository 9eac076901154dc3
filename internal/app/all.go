package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/termui"
)

// StackOptions are what plan, deploy and destroy carry alike: one
// stack/environment (the target flags, --service and --component among
// them) or, with --all, every stack under the working directory
// (docs/many-stacks.md).
type StackOptions struct {
	// From argv and the global flags.
	Target TargetFlags
	JSON   bool
	// All are --all, --changed-since and --stack-parallelism.
	All AllFlags

	// RunAll runs the command on every stack (allRunner.run).
	RunAll func(ctx context.Context, r AllRequest) error
	// Config loads deployer.yaml (Factory.Config).
	Config func() (*config.Config, error)
}

func NewStackOptions(f *Factory) StackOptions {
	return StackOptions{Config: f.Config, RunAll: newAllRunner(f).run}
}

// Bind adds the target flags, narrowing ones included, and the --all flags;
// locks says whether the command takes the lock the narrowing flags name
// (plan takes none).
func (o *StackOptions) Bind(cmd *cobra.Command, locks bool) {
	o.Target.BindMany(cmd, locks)
	o.All.Bind(cmd)
}

// Check refuses, with --all, the target flags and the command's own flags
// that act on one stack (single), and the --all flags without it; then it
// takes --json. Target.validateFlags comes first, in each command.
func (o *StackOptions) Check(cmd *cobra.Command, f *Factory, single ...string) error {
	if err := o.All.Check(cmd, f.ConfigPath, append([]string{"stack", "service", "component", "exclude"}, single...)...); err != nil {
		return err
	}
	o.JSON = f.JSON
	return nil
}

// Load reads deployer.yaml and resolves the target in it; an environment it
// does not declare is a usage error (TargetFlags.resolveWithConfig).
func (o *StackOptions) Load() (*config.Config, deploy.Target, error) {
	return o.Target.Load(o.Config, true)
}

// AllFlags are --all, --changed-since and --stack-parallelism of plan,
// deploy and destroy (docs/many-stacks.md).
type AllFlags struct {
	All              bool
	ChangedSince     string
	StackParallelism int
}

func (a *AllFlags) Bind(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&a.All, "all", false, "every stack under the working directory, in dependency order (docs/many-stacks.md)")
	cmd.Flags().StringVar(&a.ChangedSince, "changed-since", "", "with --all: only the stacks changed since git revision REF, and the stacks that read them")
	cmd.Flags().IntVar(&a.StackParallelism, "stack-parallelism", 0, fmt.Sprintf("with --all: run at most N stacks at once (default %d)", runner.DefaultStackParallelism))
}

// Check refuses, with --all, the flags that name one stack or one plan
// (single), and the --all flags without it.
func (a *AllFlags) Check(cmd *cobra.Command, configPath string, single ...string) error {
	if !a.All {
		for _, n := range []string{"changed-since", "stack-parallelism"} {
			if cmd.Flags().Changed(n) {
				return &exitcode.UsageError{Msg: "--" + n + " needs --all"}
			}
		}
		return nil
	}
	for _, n := range single {
		if cmd.Flags().Changed(n) {
			return &exitcode.UsageError{Msg: fmt.Sprintf("--all runs every stack under the working directory: drop --%s, or leave out --all to act on one stack", n)}
		}
	}
	if configPath != "" {
		return &exitcode.UsageError{Msg: "--all finds every deployer.yaml under the working directory: drop --config (DEPLOYER_CONFIG), or cd to the directory that holds your stacks"}
	}
	if cmd.Flags().Changed("stack-parallelism") && a.StackParallelism < 1 {
		return &exitcode.UsageError{Msg: fmt.Sprintf("--stack-parallelism must be at least 1, got %d", a.StackParallelism)}
	}
	return nil
}

// AllRequest is one plan, deploy or destroy --all, from the flags.
type AllRequest struct {
	Op  runner.StackOp
	Env string
	// EnvFromVar: Env came from DEPLOYER_ENVIRONMENT, named in its errors.
	EnvFromVar bool
	Flags      AllFlags
	// Parallelism is --parallelism: components at once in each stack (0:
	// each deployer.yaml's parallelism:).
	Parallelism      int
	LockTimeout      time.Duration
	Yes              bool
	DetailedExitcode bool
	InstallPulumi    bool
	Grace            time.Duration // deploy/destroy --grace
	JSON             bool
	// GitHubComment is plan --all --github-comment: the run's plans as one
	// pull request comment (runner.StacksRequest.Comment).
	GitHubComment bool
	// Policy is --policy DIR: checked, with each stack's policy.paths,
	// against each stack's plan (docs/policy.md#many-stacks).
	Policy PolicyFlags
}

// allRunner runs plan, deploy and destroy --all with what it took from the
// Factory when the command was built.
type allRunner struct {
	io    *termui.IOStreams
	rep   Reporter // the Session's
	load  func(path string) (*config.Config, error)
	open  func(ctx context.Context, cfg *config.Config, opts ServiceOptions) (*deploy.Service, error)
	now   func() time.Time
	track func() (done func()) // counts the run in Session.Stacking
}

func newAllRunner(f *Factory) *allRunner {
	return &allRunner{io: f.IO, rep: f.session.reporter(), load: f.StackConfig, open: f.Service, now: f.Now, track: f.session.track}
}

// run finds the stacks, selects them (--changed-since), asks once
// (deploy and destroy without --yes), runs the use case and renders each
// stack as it finishes, then a table (docs/many-stacks.md#output).
func (a *allRunner) run(ctx context.Context, r AllRequest) error {
	sel, err := runner.SelectStacks(ctx, runner.SelectRequest{Root: ".", Env: r.Env, Op: r.Op, ChangedSince: r.Flags.ChangedSince, Load: a.load})
	if err != nil {
		if r.EnvFromVar {
			return fmt.Errorf("%s=%s: %w", EnvironmentVar, r.Env, err)
		}
		return err
	}
	set := sel.Set
	if ref := r.Flags.ChangedSince; ref != "" {
		if len(sel.Only) == 0 {
			none := fmt.Sprintf("No stack changed since %s.", ref)
			fmt.Fprintln(a.io.ErrOut, none)
			a.rep.StacksEnded(ctx, runner.StacksEnded{Env: r.Env, None: none, Comment: r.GitHubComment})
			return nil
		}
		fmt.Fprintf(a.io.ErrOut, "Changed since %s: %s; with the stacks that read them: %s.\n", ref,
			strings.Join(sel.Changed, ", "), strings.Join(sel.Order(runner.OpPlan), ", "))
	}
	v := &allView{io: a.io, req: r, width: nameWidth(set)}
	showPlan := v.showPlan
	if r.Op != runner.OpPlan && !r.Yes {
		if showPlan, err = a.confirm(ctx, r, sel, v); err != nil {
			return err
		}
	}
	defer a.track()()
	results, err := runner.RunStacks(ctx, runner.StacksRequest{
		Set: set, Env: r.Env, Op: r.Op, Only: sel.Only,
		Parallelism: r.Flags.StackParallelism, ComponentParallelism: r.Parallelism, LockTimeout: r.LockTimeout,
		Open: func(ctx context.Context, st *stacks.Stack, ui deploy.UI) (*deploy.Service, error) {
			return a.open(ctx, st.Config, ServiceOptions{EngineOptions: EngineOptions{InstallPulumi: r.InstallPulumi, Grace: r.Grace},
				ReadOnly: r.Op == runner.OpPlan, Stack: true, UI: ui})
		},
		Policy: func(ctx context.Context, st *stacks.Stack) (*deploy.PolicyCheck, error) {
			return r.Policy.Check(ctx, st.Config)
		},
		ShowPlan: showPlan,
		OnDone:   v.done,
		Now:      a.now,
		Reporter: a.rep,
		Comment:  r.GitHubComment,
	})
	if !r.JSON {
		v.table(results)
	}
	if err != nil {
		return err
	}
	// A denied plan cannot be deployed as it is: exit 5 before the changes' 2.
	if d := runner.Denied(results); r.DetailedExitcode && d != nil {
		return d
	}
	if r.DetailedExitcode && planview.AnyChanges(results) {
		return &exitcode.ExitCodeError{Code: 2}
	}
	return nil
}

func nameWidth(set *stacks.Set) int {
	w := 5
	for _, st := range set.Stacks {
		w = max(w, len(st.Name))
	}
	return w
}

// allView renders a run as it goes: whole plans and one line per stack on
// stdout (JSON: one object per stack and line).
type allView struct {
	io    *termui.IOStreams
	req   AllRequest
	width int
	mu    sync.Mutex
}

// showPlan prints a plan with changes under a header naming its stack
// (nothing in --json mode).
func (v *allView) showPlan(st *stacks.Stack, p *plan.Plan) error {
	if v.req.JSON || !p.HasChanges() {
		return nil
	}
	return v.render(v.io.Out, st, p)
}

// render prints p under a header naming its stack, in one write (stacks
// plan at the same time).
func (v *allView) render(w io.Writer, st *stacks.Stack, p *plan.Plan) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "\n=== %s (%s)\n", st.Name, st.Dir)
	if err := planview.NewHuman(v.io.ColorOut(), v.io.Mask).Render(&b, p); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	_, err := w.Write(b.Bytes())
	return err
}

// done prints the stack's line (or JSON object); the runner then reports
// the stack (runner.Reporter.StackEnded).
func (v *allView) done(r runner.StackResult) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.req.JSON {
		data, err := json.Marshal(stackResultJSON(v.req, r))
		if err == nil {
			_, _ = v.io.Out.Write(append(data, '\n'))
		}
	} else {
		line := fmt.Sprintf("%-*s  %-10s", v.width, r.Stack, r.Status)
		for _, cell := range []string{planview.ChangesCell(r), sanitize.Line(planview.NoteCell(r, sanitize.Masked{Mask: v.io.Mask}))} {
			if cell != "" {
				line += "  " + cell
			}
		}
		fmt.Fprintln(v.io.Out, strings.TrimRight(line, " "))
	}
}

// table prints every stack of the run, in dependency order, and the totals.
func (v *allView) table(results []runner.StackResult) {
	w := v.io.Out
	fmt.Fprintln(w)
	tw := termui.NewTable(w)
	fmt.Fprintln(tw, "STACK\tDIR\tSTATUS\tCHANGES\tSERIAL\tTIME\tNOTE")
	counts := map[runner.StackStatus]int{}
	for _, r := range results {
		counts[r.Status]++
		serial := "-"
		if r.Outcome != nil && r.Outcome.Head.Serial > 0 {
			serial = strconv.FormatInt(r.Outcome.Head.Serial, 10)
		} else if r.Plan != nil && r.Plan.Serial > 0 {
			serial = strconv.FormatInt(r.Plan.Serial, 10)
		}
		took := "-"
		if !r.Started.IsZero() {
			took = fmt.Sprintf("%.1fs", r.Finished.Sub(r.Started).Seconds())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Stack, r.Dir, r.Status, termui.OrDash(planview.ChangesCell(r)), serial, took, sanitize.Line(planview.NoteCell(r, sanitize.Masked{Mask: v.io.Mask})))
	}
	tw.Flush()
	var parts []string
	for _, s := range []runner.StackStatus{runner.StackApplied, runner.StackDestroyed, runner.StackChanges, runner.StackNoChanges, runner.StackFailed, runner.StackDenied, runner.StackCancelled, runner.StackSkipped} {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	fmt.Fprintf(w, "\n%d stacks in %s: %s.\n", len(results), v.req.Env, strings.Join(parts, ", "))
}

type stackJSON struct {
	Stack           string     `json:"stack"`
	Dir             string     `json:"dir"`
	Environment     string     `json:"environment"`
	Operation       string     `json:"operation"`
	Status          string     `json:"status"`
	Reason          string     `json:"reason,omitempty"`
	Changed         bool       `json:"changed"`
	DeploymentID    string     `json:"deployment_id,omitempty"`
	Serial          int64      `json:"serial,omitempty"`
	Started         *time.Time `json:"started,omitempty"`
	Finished        *time.Time `json:"finished,omitempty"`
	DurationSeconds float64    `json:"duration_seconds,omitempty"`
	Stale           []string   `json:"stale,omitempty"`
	Plan            *plan.Plan `json:"plan,omitempty"`
}

func stackResultJSON(req AllRequest, r runner.StackResult) stackJSON {
	j := stackJSON{Stack: r.Stack, Dir: r.Dir, Environment: req.Env, Operation: string(req.Op), Status: string(r.Status),
		Reason: r.Reason, Plan: r.Plan, Stale: r.Stale}
	if r.Plan != nil {
		j.Changed, j.Serial = r.Plan.HasChanges(), r.Plan.Serial
	}
	if r.Outcome != nil && r.Outcome.Deployment.DeploymentID != "" {
		j.DeploymentID, j.Serial = r.Outcome.Deployment.DeploymentID, r.Outcome.Head.Serial
	}
	if !r.Started.IsZero() {
		s, e := r.Started.UTC(), r.Finished.UTC()
		j.Started, j.Finished, j.DurationSeconds = &s, &e, e.Sub(s).Seconds()
	}
	return j
}

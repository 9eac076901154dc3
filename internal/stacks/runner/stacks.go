package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/dag"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/stacks"
)

// StackOp is what RunStacks does to each stack.
type StackOp string

// The operations of plan --all, deploy --all and destroy --all.
const (
	OpPlan    StackOp = "plan"
	OpDeploy  StackOp = "deploy"
	OpDestroy StackOp = "destroy"
)

// DefaultStackParallelism is how many stacks RunStacks runs at once when
// StacksRequest.Parallelism is 0 (docs/many-stacks.md#parallelism).
const DefaultStackParallelism = 4

// StackStatus is how one stack of a run ended.
type StackStatus string

// Statuses of StackResult (docs/many-stacks.md#output).
const (
	StackNoChanges StackStatus = "no-changes" // planned or deployed: nothing to change
	StackChanges   StackStatus = "changes"    // plan --all: the plan has changes
	StackApplied   StackStatus = "applied"    // deploy --all: changes applied and saved
	StackDestroyed StackStatus = "destroyed"  // destroy --all: components deleted and saved
	StackFailed    StackStatus = "failed"
	StackDenied    StackStatus = "denied"    // a policy denies its plan (docs/policy.md): nothing applied
	StackCancelled StackStatus = "cancelled" // stopped by Ctrl-C while it ran
	StackSkipped   StackStatus = "skipped"   // never started: Reason says why
)

// ok reports whether stacks waiting for this one may go.
func (s StackStatus) ok() bool {
	return s == StackNoChanges || s == StackChanges || s == StackApplied || s == StackDestroyed
}

// StacksRequest is one plan, deploy or destroy of many stacks in one
// environment (docs/many-stacks.md).
type StacksRequest struct {
	Set *stacks.Set
	Env string
	Op  StackOp
	// Only, when not nil, names the stacks to run (--changed-since); the
	// others are neither run nor reported.
	Only map[string]bool
	// Parallelism bounds the stacks running at once (0:
	// DefaultStackParallelism). ComponentParallelism bounds the components
	// each stack applies at once (0: each deployer.yaml's parallelism:).
	Parallelism          int
	ComponentParallelism int
	LockTimeout          time.Duration
	// Open returns the deploy.Service of one stack: its own backends and
	// engines, its progress marked with its name, and ui, the stack's UI
	// (its plan shown with ShowPlan, confirmed: a run is confirmed before
	// it starts). Called once per stack, when it starts.
	Open func(ctx context.Context, st *stacks.Stack, ui deploy.UI) (*deploy.Service, error)
	// ShowPlan gets each stack's plan once made (nil: not shown); an error
	// fails that stack.
	ShowPlan func(st *stacks.Stack, p *plan.Plan) error
	// OnDone gets each result as its stack finishes, one at a time.
	OnDone func(StackResult)
	// Now is the clock of Started and Finished (default time.Now).
	Now func() time.Time
	// Policy returns the policies a stack's plan is checked against
	// (docs/policy.md), nil for none; called once per stack, after Open.
	// A denied stack skips the stacks waiting for it, as a failed one does.
	Policy func(ctx context.Context, st *stacks.Stack) (*deploy.PolicyCheck, error)
	// Reporter hears each stack end, after OnDone, and the run end
	// (docs/design.md#reporting); nil: no one.
	Reporter Reporter
	// Comment asks the Reporter to post the run's plans for review
	// (plan --all --github-comment; StacksEnded.Comment).
	Comment bool
}

// StackResult is what happened to one stack.
type StackResult struct {
	Stack string
	Dir   string
	// Status, and for skipped and failed stacks the reason (the error's
	// text for a failure).
	Status StackStatus
	Reason string
	Plan   *plan.Plan // nil when the stack was not planned
	// Outcome of deploy and destroy (nil for plan and for skipped stacks).
	Outcome *deploy.Outcome
	Err     error
	// Started and Finished frame the stack's work; zero when skipped.
	Started, Finished time.Time
	// Stale lists, for plan --all, the producers whose own plan has
	// changes, or that read such a stack: this plan read their current
	// outputs, which deploy --all may change before it plans this stack.
	// A producer that has no state yet cannot be read at all: its
	// consumers are skipped, with that reason.
	Stale []string
}

// StacksError is RunStacks' error when a stack failed, a deploy or
// destroy was denied by policy, or the run was cancelled; the results say
// which and why.
type StacksError struct {
	Failed    []string // failed stacks, in dependency order
	Denied    []string // stacks whose deploy or destroy a policy denied
	Cancelled bool
	// denied is what the policies denied (Denied's): the error a run
	// with denied stacks and no failed one unwraps to (exit 5).
	denied *policy.DeniedError
}

func (e *StacksError) Error() string {
	if e.Cancelled {
		return "cancelled: stacks not started were skipped; running ones saved what they did and released their locks"
	}
	var parts []string
	if len(e.Failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d stack(s) failed: %s", len(e.Failed), strings.Join(e.Failed, ", ")))
	}
	if len(e.Denied) > 0 {
		parts = append(parts, fmt.Sprintf("%d stack(s) denied by policy: %s", len(e.Denied), strings.Join(e.Denied, ", ")))
	}
	return strings.Join(parts, "; ") + "; the stacks that read them were skipped"
}

// Unwrap is a *policy.DeniedError when stacks were denied and none failed:
// the run exits as a denied deploy does.
func (e *StacksError) Unwrap() error {
	if e.Cancelled || len(e.Failed) > 0 || len(e.Denied) == 0 {
		return nil
	}
	return e.denied
}

// Is makes a cancelled run errors.Is(err, deploy.ErrCancelled) (exit 130).
func (e *StacksError) Is(target error) bool { return e.Cancelled && target == deploy.ErrCancelled }

// RunStacks plans, deploys or destroys the stacks of req.Set that declare
// req.Env (docs/many-stacks.md): each stack after every stack it reads
// (destroy: after every stack that reads it), up to req.Parallelism at
// once, each deploy under its own stack lock as a single deploy takes it.
// A stack that fails, is cancelled or skipped skips the stacks waiting for
// it, with the reason; the others go on. When ctx is cancelled no stack
// starts any more; running ones stop as a single deploy does (state saved,
// lock released).
//
// It returns every result in dependency order and a *StacksError when a
// stack failed or the run was cancelled; req.Reporter hears the same
// (StacksEnded) first.
func RunStacks(ctx context.Context, req StacksRequest) ([]StackResult, error) {
	if req.Now == nil {
		req.Now = time.Now
	}
	if req.Reporter == nil {
		req.Reporter = NoReporter{}
	}
	limit := req.Parallelism
	if limit < 1 {
		limit = DefaultStackParallelism
	}
	r := newStackRun(req)
	ex := &dag.Executor[struct{}]{
		Limit:   limit,
		Policy:  dag.SkipDependents,
		Exclude: func(i int) bool { return !r.stacks[i].InEnv },
		Call: func(ctx context.Context, ids []int) struct{} {
			r.run(ctx, ids[0])
			return struct{}{}
		},
		Done: func(run *dag.Run, ids []int, _ struct{}) error {
			r.finish(run, ids[0])
			return nil
		},
		Skip: r.skip,
	}
	ex.Run(ctx, r.graph) // the results say what happened; RunStacks' error is built from them
	var err *StacksError
	for i := range r.results {
		res := &r.results[i]
		if res.Status == "" { // never started: the run was cancelled
			res.Status, res.Reason = StackSkipped, "cancelled before it started"
			r.report(i)
		}
		switch res.Status {
		case StackFailed:
			if err == nil {
				err = &StacksError{}
			}
			err.Failed = append(err.Failed, res.Stack)
		case StackDenied:
			if req.Op == OpPlan { // a denied plan is a plan: plan --all --detailed-exitcode says so
				continue
			}
			if err == nil {
				err = &StacksError{}
			}
			err.Denied = append(err.Denied, res.Stack)
		case StackCancelled:
			if err == nil {
				err = &StacksError{}
			}
		}
	}
	if ctx.Err() != nil {
		if err == nil {
			err = &StacksError{}
		}
		err.Cancelled = true
	}
	if err != nil {
		err.denied = Denied(r.results)
		r.req.Reporter.StacksEnded(ctx, StacksEnded{Env: req.Env, Results: r.results, Err: err, Comment: req.Comment})
		return r.results, err
	}
	r.req.Reporter.StacksEnded(ctx, StacksEnded{Env: req.Env, Results: r.results, Comment: req.Comment})
	return r.results, nil
}

// stackRun is the state of one RunStacks: only the executor's scheduling
// goroutine writes it, except results[i] by the stack i while it runs.
type stackRun struct {
	req     StacksRequest
	stacks  []*stacks.Stack
	results []StackResult
	index   map[string]int
	graph   *dag.Graph // each stack after the stacks it goes after (destroy: its consumers)
}

func newStackRun(req StacksRequest) *stackRun {
	r := &stackRun{req: req, index: map[string]int{}}
	for _, st := range req.Set.Stacks {
		if req.Only != nil && !req.Only[st.Name] {
			continue
		}
		r.index[st.Name] = len(r.stacks)
		r.stacks = append(r.stacks, st)
		r.results = append(r.results, StackResult{Stack: st.Name, Dir: st.Dir})
	}
	names := make([]string, len(r.stacks))
	for i, st := range r.stacks {
		names[i] = st.Name
	}
	r.graph = dag.New(names)
	for i, st := range r.stacks {
		first := req.Set.Producers(st.Name) // deploy and plan: producers first
		if req.Op == OpDestroy {
			first = req.Set.Consumers(st.Name) // destroy: consumers first
		}
		for _, name := range first {
			if j, ok := r.index[name]; ok && r.stacks[j].InEnv {
				r.graph.Edge(j, i)
			}
		}
	}
	for i, st := range r.stacks {
		if !st.InEnv {
			r.results[i].Status = StackSkipped
			r.results[i].Reason = fmt.Sprintf("%s declares no environment %s", st.Path, req.Env)
		}
	}
	// Stacks outside the environment are reported at once; nobody waits
	// for them (their state, if any, is read as it is).
	for i, st := range r.stacks {
		if !st.InEnv {
			r.report(i)
		}
	}
	return r
}

// run does stack i's work and fills its result.
func (r *stackRun) run(ctx context.Context, i int) {
	st, res := r.stacks[i], &r.results[i]
	res.Started = r.req.Now()
	svc, err := r.req.Open(ctx, st, stackUI{st: st, show: r.req.ShowPlan})
	if err != nil {
		res.Status, res.Err = StackFailed, err
		return
	}
	var check *deploy.PolicyCheck
	if r.req.Policy != nil {
		if check, err = r.req.Policy(ctx, st); err != nil {
			res.Status, res.Err = StackFailed, err
			return
		}
	}
	if r.req.Op == OpPlan {
		r.plan(ctx, i, svc, check)
		return
	}
	r.apply(ctx, i, svc, check)
}

// plan plans stack i (plan --all) and checks its policies: a denied plan
// is the status denied.
func (r *stackRun) plan(ctx context.Context, i int, svc *deploy.Service, check *deploy.PolicyCheck) {
	st, res := r.stacks[i], &r.results[i]
	if name := r.unborn(st); name != "" {
		res.Status = StackSkipped
		res.Reason = fmt.Sprintf("reads %s, which has no state yet: deploy --all creates it first, then plans this stack", name)
		return
	}
	p, err := svc.Plan(ctx, deploy.PlanRequest{Config: st.Config, Target: deploy.Target{Stack: st.Name, Env: r.req.Env}, Policy: check})
	res.Plan, res.Err = p, err
	if err == nil && r.req.ShowPlan != nil {
		res.Err = r.req.ShowPlan(st, p)
	}
	switch {
	case res.Err != nil:
		res.Status = StackFailed
	case len(p.Policy.Denied()) > 0:
		res.Status, res.Reason = StackDenied, (&policy.DeniedError{Results: p.Policy.Denied()}).Error()
	case p.HasChanges():
		res.Status = StackChanges
	default:
		res.Status = StackNoChanges
	}
	for _, name := range r.req.Set.Producers(st.Name) {
		if j, ok := r.index[name]; ok && (r.results[j].Status == StackChanges || len(r.results[j].Stale) > 0) {
			res.Stale = append(res.Stale, name)
		}
	}
}

// apply deploys or destroys stack i under its own lock, its policies
// checked as a single deploy checks them.
func (r *stackRun) apply(ctx context.Context, i int, svc *deploy.Service, check *deploy.PolicyCheck) {
	st, res := r.stacks[i], &r.results[i]
	req := deploy.ApplyRequest{Config: st.Config, Target: deploy.Target{Stack: st.Name, Env: r.req.Env}, Destroy: r.req.Op == OpDestroy,
		LockTimeout: r.req.LockTimeout, Parallelism: r.req.ComponentParallelism, Policy: check}
	out, err := svc.Apply(ctx, req)
	res.Outcome, res.Err = out, err
	if out != nil {
		res.Plan = out.Plan
	}
	var ae *deploy.ApplyError
	var denied *policy.DeniedError
	var notOverridable *policy.NotOverridableError
	switch {
	case err != nil && (errors.As(err, &ae) && ae.Cancelled || ctx.Err() != nil):
		res.Status = StackCancelled
	case errors.As(err, &denied), errors.As(err, &notOverridable):
		res.Status = StackDenied
	case err != nil:
		res.Status = StackFailed
	case out != nil && out.Deployment.DeploymentID != "" && r.req.Op == OpDestroy:
		res.Status = StackDestroyed
	case out != nil && out.Deployment.DeploymentID != "":
		res.Status = StackApplied
	default:
		res.Status = StackNoChanges
	}
}

// stackUI is the UI of one stack's deploy or destroy: its plan shown as
// StacksRequest.ShowPlan says, confirmed (the run was confirmed before it
// started); its steps are heard by the wiring's progress, not here.
type stackUI struct {
	deploy.NoUI
	st   *stacks.Stack
	show func(st *stacks.Stack, p *plan.Plan) error
}

func (u stackUI) ShowPlan(p *plan.Plan) error {
	if u.show == nil {
		return nil
	}
	return u.show(u.st, p)
}

// Denied returns what the policies denied in the stacks of results, each
// policy named with its stack ("freeze (stack shop)"); nil when no stack
// was denied.
func Denied(results []StackResult) *policy.DeniedError {
	var out []policy.Result
	for _, res := range results {
		if res.Status != StackDenied || res.Plan == nil {
			continue
		}
		for _, x := range res.Plan.Policy.Denied() {
			x.Policy = fmt.Sprintf("%s (stack %s)", x.Policy, res.Stack)
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &policy.DeniedError{Results: out}
}

// unborn returns a producer of st in this run whose plan creates its
// first state: st's references to it cannot be read yet.
func (r *stackRun) unborn(st *stacks.Stack) string {
	for _, name := range r.req.Set.Producers(st.Name) {
		if j, ok := r.index[name]; ok && r.results[j].Status == StackChanges && r.results[j].Plan.Lineage == "" {
			return name
		}
	}
	return ""
}

// finish reports stack i and, when it ended well, releases the stacks
// waiting for it; when it did not the executor skips them (skip). Once
// the run is cancelled they stay waiting: RunStacks reports them as not
// started.
func (r *stackRun) finish(run *dag.Run, i int) {
	res := &r.results[i]
	res.Finished = r.req.Now()
	if res.Err != nil && res.Reason == "" {
		res.Reason = oneLine(res.Err.Error())
	}
	r.report(i)
	if res.Status.ok() {
		run.Finish(i)
	}
}

// skip marks stack j skipped because of stack i and reports it; the
// executor goes on with the stacks waiting for j.
func (r *stackRun) skip(j, i int) {
	role := "producer"
	if r.req.Op == OpDestroy {
		role = "consumer"
	}
	cause := r.results[i]
	r.results[j].Status = StackSkipped
	r.results[j].Reason = fmt.Sprintf("%s %s %s", role, cause.Stack, cause.Status)
	if cause.Status == StackSkipped {
		r.results[j].Reason = fmt.Sprintf("%s %s was skipped: %s", role, cause.Stack, cause.Reason)
	}
	r.report(j)
}

func (r *stackRun) report(i int) {
	if r.req.OnDone != nil {
		r.req.OnDone(r.results[i])
	}
	r.req.Reporter.StackEnded(r.req.Env, r.results[i])
}

// oneLine joins a multi-line error into one line for a table cell.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// DeployerExitCode is 130 for a cancelled run of many stacks; otherwise
// what it wraps decides (a run of denied stacks exits 5).
func (e *StacksError) DeployerExitCode() int {
	if e.Cancelled {
		return exitcode.Cancelled
	}
	return 0
}

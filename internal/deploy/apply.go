package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// ApplyRequest is one deploy or destroy.
type ApplyRequest struct {
	Config      *config.Config
	Target      Target
	Destroy     bool
	SavedPlan   *plan.Plan // deploy --plan FILE; nil plans afresh
	LockTimeout time.Duration
	// Parallelism bounds the engine calls running at once (--parallelism;
	// 0 takes deployer.yaml's parallelism:, with DEPLOYER_PARALLELISM
	// applied, then config.DefaultParallelism; 1 applies one component at
	// a time).
	Parallelism int
	// ShowPlan renders the plan before confirmation (nil: not shown).
	ShowPlan func(*plan.Plan) error
	// Confirm asks the user; nil means --yes.
	Confirm func(*plan.Plan) (bool, error)
}

// Outcome is what a deploy did.
type Outcome struct {
	Plan       *plan.Plan
	Deployment statestore.Deployment // zero when nothing was applied
	Head       statestore.Head
	Results    []engine.Result
	// Unchanged lists the re-evaluated components whose resolved inputs came
	// out equal after their dependencies applied: left alone.
	Unchanged []string
	Lock      lockmgr.Record
	// Summary counts what the run did, for every renderer.
	Summary Summary
}

// Errors of Apply besides the ones of lockmgr and statestore.
var (
	ErrDeclined = errors.New("apply cancelled: the plan was not confirmed")
	// ErrPlanStale: the saved plan was made against another state or config.
	ErrPlanStale = errors.New("saved plan is stale")
	ErrCancelled = errors.New("cancelled")
)

// ApplyError reports a failed apply; Outcome holds what was saved.
type ApplyError struct {
	Err       error
	Cancelled bool
}

func (e *ApplyError) Error() string { return e.Err.Error() }
func (e *ApplyError) Unwrap() error { return e.Err }

// Apply runs the main job (docs/design.md#the-main-job): the engines'
// preflight for the components in scope, then, with the backends opened,
// the lock, plan, apply and save. It returns the Outcome and: the
// preflight's error (nothing touched);
// *lockmgr.HeldError (exit 3); *statestore.ChecksumError or ConflictError
// (exit 4); ErrDeclined; ErrPlanStale; *ApplyError when a component failed or
// the run was cancelled (whatever succeeded is saved first).
func (s *Service) Apply(ctx context.Context, req ApplyRequest) (*Outcome, error) {
	t := req.Target
	if err := s.preflight(ctx, req.Config, t); err != nil {
		return nil, err
	}
	res, err := s.resolve(req.Config, t)
	if err != nil {
		return nil, err
	}
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	if err := s.checkSecrets(ctx, t, s.learnSecrets(res)); err != nil {
		return nil, err
	}
	if req.SavedPlan != nil {
		if err := s.checkSavedBeforeLock(ctx, req.SavedPlan, res, t, req.Destroy); err != nil {
			return nil, err
		}
	}
	op := lockmgr.OpDeploy
	if req.Destroy {
		op = lockmgr.OpDestroy
	}
	depID := NewDeploymentID()
	commit, branch := s.gitInfo(req.Config.Dir)
	holders := s.watchHolders(ctx, t.LockKey())
	lease, err := s.lease(ctx, leaseRequest{Key: t.LockKey(), Op: op, DeploymentID: depID, GitCommit: commit, GitBranch: branch,
		Timeout: req.LockTimeout, OnWait: holders.onWait, Announce: true})
	if err != nil {
		return nil, err
	}
	defer lease.release() // a failure is reported on the progress stream
	rec := lease.Record()
	by := lease.By
	work := lease.Context()
	out := &Outcome{Lock: rec}
	s.recordAbandoned(work, lease, t, holders.abandoned(rec), "taken over after it expired")

	st, head, err := s.loadOrNew(work, t)
	if err != nil {
		return out, err
	}
	read, err := s.readData(work, res, t, req.Destroy)
	if err != nil {
		return out, err
	}
	p, err := s.buildPlan(res, st, head, t, req.Destroy, read)
	if err != nil {
		return out, err
	}
	var saved *plan.Binding
	if req.SavedPlan != nil {
		saved = req.SavedPlan.Binding
	}
	if p.Binding, err = s.bind(work, res, st, t, read, saved, req.SavedPlan != nil); err != nil {
		return out, err
	}
	out.Plan = p
	if req.SavedPlan != nil {
		if err := checkSavedPlan(req.SavedPlan, p); err != nil {
			return out, err
		}
	}
	if req.ShowPlan != nil {
		if err := req.ShowPlan(p); err != nil {
			return out, err
		}
	}
	if !p.HasChanges() {
		return out, nil
	}
	if req.Confirm != nil {
		ok, err := req.Confirm(p)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, ErrDeclined
		}
	}

	start := s.d.Now()
	s.d.Audit.Info("deploy.started", "deployment_id", depID, "stack", t.Stack, "environment", t.Env,
		"scope", t.LockKey(), "operation", string(op), "lock_id", lease.Record().LockID)
	in := engine.Inputs{
		Stack: t.Stack, Env: t.Env, Dir: req.Config.Dir, EnvConfig: res.EnvConfig,
		DeploymentID: depID, Outputs: withRead(outputsOf(st), read), Progress: s.d.Masker.Writer(s.d.Progress), StackOutputs: s.stackOutputs,
		Learn: s.learnOutputs,
	}
	run, applyErr := s.runEngines(work, p, st, in, req.Destroy, req.parallelism())
	out.Results, out.Unchanged = run.results, run.unchanged

	status := statestore.DeploymentSuccess
	cancelled := applyErr != nil && ctx.Err() != nil
	switch {
	case cancelled:
		status = statestore.DeploymentCancelled
	case applyErr != nil:
		status = statestore.DeploymentFailed
	}
	dep := statestore.Deployment{
		DeploymentID: depID, Type: string(op), Timestamp: start.UTC(), TriggeredBy: by, GitCommit: commit,
		Status: status, DurationSeconds: s.d.Now().Sub(start).Seconds(), Scope: t.LockKey(),
	}
	if applyErr != nil {
		dep.Error = s.d.Masker.Mask(applyErr.Error())
	}
	ch := changesFrom(p, run, s.d.Now().UTC(), depID, dep.DurationSeconds)
	dep.ResourcesChanged = ch.counts
	out.Summary = summarize(ch, run, len(p.Changes()))

	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	newHead, err := s.save(saveCtx, lease, t, st, head, ch, dep, commit, branch)
	out.Head = newHead
	out.Deployment = dep
	s.d.Audit.Info("deploy.finished", "deployment_id", depID, "stack", t.Stack, "environment", t.Env,
		"status", status, "duration_seconds", dep.DurationSeconds, "serial", newHead.Serial,
		"created", dep.ResourcesChanged.Created, "updated", dep.ResourcesChanged.Updated, "deleted", dep.ResourcesChanged.Deleted)
	s.finished(t, dep, out.Summary, err)
	if err != nil {
		return out, err
	}
	if applyErr != nil {
		if cancelled {
			return out, &ApplyError{Err: fmt.Errorf("%s %w; what finished is saved in the state: %v", op, ErrCancelled, applyErr), Cancelled: true}
		}
		return out, &ApplyError{Err: applyErr}
	}
	return out, nil
}

// parallelism is the bound of engine calls at once: the request's, else
// the config's, else config.DefaultParallelism.
func (r ApplyRequest) parallelism() int {
	switch {
	case r.Parallelism > 0:
		return r.Parallelism
	case r.Config != nil && r.Config.Parallelism > 0:
		return r.Config.Parallelism
	}
	return config.DefaultParallelism
}

func (s *Service) engineFor(kind string) (engine.Engine, error) {
	for _, e := range s.d.Engines {
		if e.Handles(kind) {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no engine handles kind %q", kind)
}

// keepFor lists the components of eng's kinds that this run leaves as they
// are: no-op steps, components outside the --service/--component scope, and
// components whose own change comes in a later run. Pulumi's program must
// still declare them, or `up` would delete them (docs/pulumi.md).
func keepFor(p *plan.Plan, st *statestore.State, eng engine.Engine, run []plan.Step) []plan.Step {
	inRun := map[string]bool{}
	for _, s := range run {
		inRun[s.Address] = true
	}
	planned := map[string]plan.Step{}
	for _, s := range p.Steps {
		planned[s.Address] = s
	}
	var keep []plan.Step
	for _, addr := range slices.Sorted(maps.Keys(st.Resources)) {
		r := st.Resources[addr]
		if inRun[addr] || !eng.Handles(r.Kind) {
			continue
		}
		keep = append(keep, declared(planned, addr, r))
	}
	return keep
}

// declared is the no-op step that declares the state resource r at addr as it
// is: the plan's own no-op step when it has one (with no re-evaluation mark),
// else one built from r.
func declared(planned map[string]plan.Step, addr string, r *statestore.Resource) plan.Step {
	if s, ok := planned[addr]; ok && s.Action == plan.NoOp {
		s.Reevaluate = false
		return s
	}
	svc, comp := config.SplitAddress(addr)
	return plan.Step{Address: addr, Service: svc, Component: comp, Kind: r.Kind, Action: plan.NoOp,
		DependsOn: r.Dependencies, Config: r.DesiredConfig, Prior: r}
}

func outputsOf(st *statestore.State) map[string]map[string]any {
	out := make(map[string]map[string]any, len(st.Resources))
	for addr, r := range st.Resources {
		out[addr] = maps.Clone(r.Outputs)
	}
	return out
}

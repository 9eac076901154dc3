package deploy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/exitcode"
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
	// Policy checks the plan before the lease is taken and again under
	// it, before any engine runs (docs/policy.md): a deny left after the
	// overrides stops the deploy with *policy.DeniedError, nothing written.
	Policy *PolicyCheck
	// WithDependents widens a destroy of some components to the
	// components that depend on them (destroy --with-dependents); without
	// it such a destroy is refused with *plan.DependentsError.
	WithDependents bool
	// Run makes the deploy one job of a CI run (deploy --run-id): it waits
	// for the run's upstream stacks first, and records a deployment even
	// when nothing changes (docs/many-stacks.md#one-job-per-stack-the-matrix); nil
	// outside a run.
	Run *Run
	// Replace are components to replace though their config does not
	// force it (deploy --replace ADDR, repeatable; plan.Options.Replace).
	// A saved plan's own replacements apply instead.
	Replace []string
	// Import makes the apply `deployer import ADDR ID`: the plan of that
	// one component with its import: block saying ID, recorded as type
	// import (docs/operations.md#import); nil otherwise.
	Import *ImportTarget
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
	// Upstream is how the wait for each upstream stack of the run ended
	// (ApplyRequest.Run); nil outside a run.
	Upstream []UpstreamWait
	// AlreadyApplied: the run had already deployed this stack and nothing
	// changed since, so nothing was written.
	AlreadyApplied bool
}

// Errors of Apply besides the ones of lockmgr and statestore.
var (
	ErrDeclined = core.ErrDeclined
	// ErrPlanStale: the saved plan was made against another state or config.
	ErrPlanStale = exitcode.New(exitcode.State, "saved plan is stale")
	ErrCancelled = exitcode.New(exitcode.Cancelled, "cancelled")
)

// ApplyError reports a failed apply; Outcome holds what was saved.
type ApplyError struct {
	Err       error
	Cancelled bool
}

func (e *ApplyError) Error() string { return e.Err.Error() }
func (e *ApplyError) Unwrap() error { return e.Err }

// DeployerExitCode is 130 for a cancelled apply; otherwise the wrapped error decides.
func (e *ApplyError) DeployerExitCode() int {
	if e.Cancelled {
		return exitcode.Cancelled
	}
	return 0
}

// Apply runs the main job (docs/design.md#the-main-job) as its phases:
// prepare (resolve the config once, the engines' preflight, open the
// backends, check the secrets provider), with policies plan and check
// them (then the preflight), take the lease, plan under it (the planning
// path of Plan, checked again), show and confirm, run the engines, record
// the deployment and save the state. It returns the Outcome and: the
// preflight's error (nothing touched); *policy.DeniedError (the Outcome's
// Plan says why; nothing touched, no engine run); *lockmgr.HeldError (exit 3);
// *statestore.ChecksumError or ConflictError (exit 4); ErrDeclined;
// ErrPlanStale; *ApplyError when a component failed or the run was
// cancelled (whatever succeeded is saved first). A deploy of a run
// (req.Run) that fails before it records its deployment records its
// failure for the run (RecordRunFailure). Either way the Reporter hears how
// it ended (Applied).
func (s *Service) Apply(ctx context.Context, req ApplyRequest) (*Outcome, error) {
	out, err := s.apply(ctx, req)
	if err != nil && req.Run != nil && (out == nil || out.Head.IsZero()) { // no record of the run saved
		s.RecordRunFailure(ctx, RunFailureRequest{Config: req.Config, Target: req.Target, Run: req.Run, Err: err, LockTimeout: req.LockTimeout})
	}
	s.d.Reporter.Applied(Applied{Target: req.Target, Outcome: out, Err: err, Run: req.Run})
	return out, err
}

func (s *Service) apply(ctx context.Context, req ApplyRequest) (_ *Outcome, err error) {
	if err := req.Policy.load(ctx); err != nil {
		return nil, err
	}
	if req.Import != nil {
		if req.Config, req.Target, err = s.withImport(req.Config, req.Target, req.Import); err != nil {
			return nil, err
		}
		defer func() { byImportCommand(err, req.Import.Address) }()
	}
	// With policies the engines' preflight waits for their verdict: a
	// denied plan runs no engine at all (docs/policy.md#where-policies-apply).
	pr, err := s.prepare(ctx, req.Config, req.Target, !req.Policy.active())
	if err != nil {
		return nil, err
	}
	pr.replace = req.Replace
	if req.SavedPlan != nil {
		pr.replace = req.SavedPlan.Replace
	}
	// The state is read once, here: its secrets block checked now, the
	// document verified and planned against below (docs/design.md#read-once-plan-once).
	doc, err := s.c.ReadState(ctx, pr.t)
	if err != nil {
		return nil, err
	}
	if err := s.c.Store.CheckSecretsOf(ctx, doc, pr.secrets); err != nil {
		return nil, err
	}
	if err := s.c.RefuseErrored(pr.t); err != nil {
		return nil, err
	}
	waits, err := s.waitUpstream(ctx, pr.t.Env, req.Run)
	if err != nil {
		return &Outcome{Upstream: waits}, err
	}
	pre, pr, err := s.planBeforeLease(ctx, pr, &req, doc)
	if err != nil {
		return nil, err
	}
	if req.SavedPlan != nil {
		if err := checkSavedPolicies(req.SavedPlan, req.Policy); err != nil {
			return nil, err
		}
		if err := s.checkSavedBeforeLock(ctx, req.SavedPlan, pr.res, pr.t, req.Destroy); err != nil {
			return nil, err
		}
	}
	if req.Policy.active() {
		// Denied before the lease: the lock, like the state, is untouched.
		if err := s.checkPolicy(ctx, pre.plan, req.Policy, "deploy", pr.cfg.Dir); err != nil {
			return &Outcome{Plan: pre.plan}, err
		}
		if err := s.preflight(ctx, pr.res, pr.t); err != nil {
			return nil, err
		}
	}
	run, err := s.startRun(ctx, pr, req)
	if err != nil {
		return nil, err
	}
	defer run.lease.ReleaseInto(&err)
	out := &Outcome{Lock: run.lease.Record(), Upstream: waits}
	pl, err := s.planUnderLease(run, pr, req, out, pre)
	if err != nil {
		return out, err
	}
	if proceed, err := s.confirm(pl.plan); !proceed || err != nil {
		if err != nil || req.Run == nil || pl.plan.HasChanges() {
			return out, err
		}
		if out.AlreadyApplied = req.Run.appliedIn(pl.st); out.AlreadyApplied {
			return out, nil
		}
		// Nothing to change, but the run's waiters need this stack's
		// record: a deployment of no changes is written.
	}
	return s.execute(ctx, run, pr, pl, req, out)
}

// deployRun is one deploy or destroy holding its lease.
type deployRun struct {
	id             string // the deployment id
	op             lockmgr.Operation
	commit, branch string
	lease          *lockmgr.Holding
}

// startRun takes the lease of the target's level for the deploy or destroy
// of req (its Acquired line printed), and records as abandoned the
// deployments whose expired locks stood in its way
// (docs/design.md#abandoned-deployments).
func (s *Service) startRun(ctx context.Context, pr *prepared, req ApplyRequest) (*deployRun, error) {
	run := &deployRun{id: core.NewDeploymentID(), op: lockmgr.OpDeploy}
	switch {
	case req.Destroy:
		run.op = lockmgr.OpDestroy
	case req.Import != nil:
		run.op = lockmgr.OpImport
	}
	run.commit, run.branch = s.c.GitInfo(pr.cfg.Dir)
	key := pr.t.LockKey()
	holders := s.c.WatchHolders(ctx, key)
	lease, err := s.c.Lease(ctx, lockmgr.LeaseRequest{Key: key, Op: run.op, DeploymentID: run.id, GitCommit: run.commit, GitBranch: run.branch,
		Timeout: req.LockTimeout, OnWait: holders.OnWait, Announce: true})
	if err != nil {
		return nil, err
	}
	run.lease = lease
	s.c.RecordAbandoned(lease.Context(), lease, pr.t, holders.Abandoned(lease.Record()), "taken over after it expired")
	return run, nil
}

// planUnderLease returns the plan to apply, under the lease
// (docs/design.md#read-once-plan-once): pre, the plan made before the lease
// and checked there, when the state's Version is still the one pre was
// planned against (one cheap read: Store.ReadVersion); otherwise a new plan
// by the planning path of Plan (planFor), checked again (refuseUnderLease,
// policies). A saved plan (deploy --plan) is always planned again and
// checked against the file. out.Plan is the plan returned.
func (s *Service) planUnderLease(run *deployRun, pr *prepared, req ApplyRequest, out *Outcome, pre *planned) (*planned, error) {
	if req.SavedPlan == nil && pre != nil {
		ver, err := s.c.Store.ReadVersion(run.lease.Context(), pr.t.Stack, pr.t.Env)
		if err != nil {
			return nil, err
		}
		if ver == pre.head.Version {
			out.Plan = pre.plan
			return pre, nil
		}
	}
	var saved *plan.Binding
	if req.SavedPlan != nil {
		saved = req.SavedPlan.Binding
	}
	pl, err := s.planFor(run.lease.Context(), pr, req.Destroy, saved, req.SavedPlan != nil)
	if err != nil {
		return nil, err
	}
	out.Plan = pl.plan
	if err := refuseUnderLease(pl, pr, req.Destroy); err != nil {
		return nil, err
	}
	if req.SavedPlan != nil {
		if err := checkSavedPlan(req.SavedPlan, pl.plan); err != nil {
			return nil, err
		}
	}
	if err := s.checkPolicy(run.lease.Context(), pl.plan, req.Policy, "deploy", pr.cfg.Dir); err != nil {
		return nil, err
	}
	return pl, nil
}

// confirm shows p and asks to apply it, through the UI. It says whether
// to go on: not when p changes nothing, nor when the user declines
// (ErrDeclined).
func (s *Service) confirm(p *plan.Plan) (bool, error) {
	if err := s.d.UI.ShowPlan(p); err != nil {
		return false, err
	}
	if !p.HasChanges() {
		return false, nil
	}
	ok, err := s.d.UI.Confirm(p)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, ErrDeclined
	}
	return true, nil
}

// execute runs the engines on the confirmed plan under the lease, then
// records the deployment and saves the state, even when an engine failed
// or ctx was cancelled: what finished is saved (docs/design.md#the-main-job).
func (s *Service) execute(ctx context.Context, run *deployRun, pr *prepared, pl *planned, req ApplyRequest, out *Outcome) (*Outcome, error) {
	t, rec := pr.t, run.lease.Record()
	start := s.c.Now()
	s.auditOverrides(pl.plan, run.id, t)
	s.c.Audit.Info("deploy.started", "deployment_id", run.id, "stack", t.Stack, "environment", t.Env,
		"scope", t.LockKey(), "operation", string(run.op), "lock_id", rec.LockID)
	in := engine.Inputs{
		Stack: t.Stack, Env: t.Env, Dir: pr.cfg.Dir, EnvConfig: pr.res.EnvConfig,
		DeploymentID: run.id, Outputs: withRead(outputsOf(pl.st), pl.read), Progress: s.c.Masker.Writer(s.c.Progress), StackOutputs: s.stackOutputs,
		Learn: s.c.LearnOutputs,
	}
	ran, applyErr := s.x.Apply(run.lease.Context(), executor.Request{Plan: pl.plan, State: pl.st, Inputs: in, Destroy: req.Destroy, Limit: req.parallelism()})
	out.Results, out.Unchanged = ran.Results, ran.Unchanged
	cancelled := applyErr != nil && ctx.Err() != nil
	dep, ch := s.record(run, pl, ran, start, applyErr, cancelled)
	ch.Outputs, ch.SetOutputs = pr.res.Outputs, true
	req.Run.stamp(&dep)
	out.Summary = ran.Summarize(ch.Changes, len(pl.plan.Changes()))

	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	newHead, err := s.c.Save(saveCtx, run.lease, t, pl.st, pl.head, ch, dep, run.commit, run.branch)
	out.Head = newHead
	out.Deployment = dep
	s.c.Audit.Info("deploy.finished", "deployment_id", run.id, "stack", t.Stack, "environment", t.Env,
		"status", dep.Status, "duration_seconds", dep.DurationSeconds, "serial", newHead.Serial,
		"created", dep.ResourcesChanged.Created, "updated", dep.ResourcesChanged.Updated, "deleted", dep.ResourcesChanged.Deleted)
	s.c.Finish(t, dep, out.Summary, err)
	if err != nil {
		return out, err
	}
	if applyErr != nil {
		if cancelled {
			return out, &ApplyError{Err: fmt.Errorf("%s %w; what finished is saved in the state: %v", run.op, ErrCancelled, applyErr), Cancelled: true}
		}
		return out, &ApplyError{Err: applyErr}
	}
	return out, nil
}

// record is the deployment entry of a run that started at start and the
// changes it makes to the state: its status (success, failed, cancelled),
// duration, counts and masked error.
func (s *Service) record(run *deployRun, pl *planned, ran executor.Run, start time.Time, applyErr error, cancelled bool) (statestore.Deployment, core.ChangeSet) {
	status := statestore.DeploymentSuccess
	switch {
	case cancelled:
		status = statestore.DeploymentCancelled
	case applyErr != nil:
		status = statestore.DeploymentFailed
	}
	dep := statestore.Deployment{
		DeploymentID: run.id, Type: string(run.op), Timestamp: start.UTC(), TriggeredBy: run.lease.By, GitCommit: run.commit,
		Status: status, DurationSeconds: s.c.Now().Sub(start).Seconds(), Scope: run.lease.Record().LockKey,
	}
	if applyErr != nil {
		dep.Error = s.c.Masker.Mask(applyErr.Error())
	}
	if pl.plan.Policy != nil {
		for _, r := range pl.plan.Policy.Results {
			if r.Override != nil && len(r.Deny) > 0 {
				dep.PolicyOverrides = append(dep.PolicyOverrides, statestore.PolicyOverride{Policy: r.Policy, Reason: r.Override.Reason, By: r.Override.By,
					Verified: r.Override.Verified, Source: r.Override.Source, Denies: r.Deny})
			}
		}
	}
	dep.Moved = movedLines(pl.plan)
	ch := core.ChangeSet{Changes: ran.Changes(pl.plan, s.c.Now().UTC(), run.id)}
	dep.ResourcesChanged, dep.Imported = ch.Counts, ch.Imported
	dep.Deleted = slices.Sorted(slices.Values(ch.Deleted))
	return dep, ch
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

func outputsOf(st *statestore.State) map[string]map[string]any {
	out := make(map[string]map[string]any, len(st.Resources))
	for addr, r := range st.Resources {
		out[addr] = maps.Clone(r.Outputs)
	}
	return out
}

package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// RunFailureRequest is a deploy --run-id that ended with Err before it
// recorded its deployment: a config it could not resolve, a policy that
// denied or did not compile, a refused or failed plan, an interrupt, a
// saved plan it could not use.
type RunFailureRequest struct {
	Config *config.Config // for the git commit; may be nil
	Target Target
	Run    *Run
	Err    error
	// LockTimeout is the deploy's --lock-timeout: the record waits at most
	// that long, and at most 30 s, for the stack's lock (not at all after
	// an interrupt).
	LockTimeout time.Duration
}

// runFailureWait bounds the wait for the lock, and the write, of a run's
// failure record.
const runFailureWait = 30 * time.Second

// RecordRunFailure writes the outcome of a deploy --run-id that failed
// before it recorded its deployment: a deployment of the run (type
// deploy) with status failed, or cancelled after an interrupt, and the
// error, masked, as one state write under the target's lease and nothing
// else changed. The run's jobs that wait for this stack then stop at their
// next read, naming it and the error (docs/many-stacks.md#one-job-per-stack-the-matrix),
// instead of waiting out --wait-timeout. Nothing is written for a deploy
// skipped because of its own upstream (its waiters read that upstream
// too), nor when the stack's lock is held by another (the write would
// race its holder), nor while an errored state of the target waits to be
// pushed (a new serial would orphan it): the progress stream then says
// that the waiting jobs are not told, as it does when the backend fails.
// It returns whether the record was written.
func (s *Service) RecordRunFailure(ctx context.Context, req RunFailureRequest) bool {
	if req.Run == nil || req.Err == nil || req.Target.Stack == "" || req.Target.Env == "" {
		return false
	}
	var skipped *SkippedError
	if errors.As(req.Err, &skipped) {
		return false
	}
	id, serial, err := s.writeRunFailure(ctx, req)
	if err != nil {
		fmt.Fprintf(s.c.Progress, "warning: could not record the failure of this deploy for run %s: %v; the stacks of the run that wait for %s wait until their --wait-timeout\n",
			req.Run.ID, err, req.Target.Stack)
		return false
	}
	fmt.Fprintf(s.c.Progress, "Recorded the failure of this deploy for run %s (deployment %s, serial %d): the stacks of the run that wait for %s stop now.\n",
		req.Run.ID, id, serial, req.Target.Stack)
	return true
}

func (s *Service) writeRunFailure(ctx context.Context, req RunFailureRequest) (string, int64, error) {
	var held *lockmgr.HeldError
	var pending *core.PendingErroredError
	var errored *core.ErroredStateError
	switch {
	case errors.As(req.Err, &held):
		return "", 0, errors.New("the stack's lock is held by another, and the state is written only under it")
	case errors.As(req.Err, &pending), errors.As(req.Err, &errored):
		return "", 0, errors.New("an errored state of the stack must be pushed first (a new serial would orphan it)")
	}
	cancelled := ctx.Err() != nil || errors.Is(req.Err, context.Canceled) || errors.Is(req.Err, ErrCancelled)
	wait := min(max(req.LockTimeout, 0), runFailureWait)
	if cancelled {
		wait = 0
	}
	// An interrupt cancelled ctx: the record is the last thing this job
	// does, bounded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runFailureWait+wait)
	defer cancel()
	if err := s.c.Open(ctx); err != nil {
		return "", 0, err
	}
	if s.c.Locks == nil || s.c.Store == nil {
		return "", 0, errors.New("the state backend is not open")
	}
	id := core.NewDeploymentID()
	dir := "."
	if req.Config != nil {
		dir = req.Config.Dir
	}
	commit, branch := s.c.GitInfo(dir)
	l, err := s.c.Lease(ctx, lockmgr.LeaseRequest{Key: req.Target.LockKey(), Op: lockmgr.OpDeploy, DeploymentID: id, GitCommit: commit, GitBranch: branch, Timeout: wait})
	if err != nil {
		return "", 0, err
	}
	defer func() {
		if rerr := l.ReleaseBounded(); rerr != nil {
			fmt.Fprintf(s.c.Progress, "warning: lock %s was not released: %v\n", l.Record().LockKey, rerr)
		}
	}()
	st, head, err := s.c.LoadOrNew(ctx, req.Target)
	if err != nil {
		return "", 0, err
	}
	now := s.c.Now().UTC()
	rec := l.Record()
	status := statestore.DeploymentFailed
	if cancelled {
		status = statestore.DeploymentCancelled
	}
	st.Serial++
	dep := statestore.Deployment{
		DeploymentID: id, Type: string(lockmgr.OpDeploy), Timestamp: now, TriggeredBy: l.By, GitCommit: commit,
		Status: status, Scope: rec.LockKey, Serial: st.Serial, Error: s.c.Masker.Mask(req.Err.Error()),
	}
	req.Run.stamp(&dep)
	st.DeploymentHistory = append([]statestore.Deployment{dep}, st.DeploymentHistory...)
	if len(st.DeploymentHistory) > core.MaxHistoryInState {
		st.DeploymentHistory = st.DeploymentHistory[:core.MaxHistoryInState]
	}
	st.Metadata.LastUpdated, st.Metadata.LastUpdatedBy, st.Metadata.Fence = now, rec.LockedBy, rec.Fence
	if _, err := s.c.Store.Save(ctx, st, head, core.LeaseRef(l)); err != nil {
		return "", 0, err
	}
	s.c.Audit.Info("deploy.run_failure_recorded", "deployment_id", id, "stack", req.Target.Stack, "environment", req.Target.Env,
		"run_id", req.Run.ID, "run_attempt", req.Run.Attempt, "status", status, "serial", st.Serial)
	return id, st.Serial, nil
}

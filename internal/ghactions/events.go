package ghactions

import (
	"context"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// The Reporter hears the use cases' events (docs/design.md#reporting): the
// wiring registers it once, as the Reporter of the deploy use cases, the
// state and lock operations and the many-stacks runner. Each event is
// written here as the command that ran it wrote it before.
var (
	_ deploy.Reporter   = (*Reporter)(nil)
	_ stateops.Reporter = (*Reporter)(nil)
	_ runner.Reporter   = (*Reporter)(nil)
)

// Planned writes a plan's drift (plan --refresh), its job summary and
// outputs, and posts it for review when asked (plan --github-comment).
func (r *Reporter) Planned(ctx context.Context, e deploy.Planned) {
	if e.Refreshed {
		r.Drift(e.Target, e.Drift)
	}
	r.Plan(e.Target, e.Plan, len(e.Drift) > 0)
	switch {
	case e.Review.Comment && e.Review.RunID != "":
		r.CommentRunPlan(ctx, e.Review.RunID, e.Target, e.Plan)
	case e.Review.Comment:
		r.CommentPlan(ctx, e.Target, e.Plan)
	}
}

// Applied writes a deploy, destroy or import (Deploy) and, for a job of a
// run, its wait for the upstream stacks (RunWait).
func (r *Reporter) Applied(e deploy.Applied) {
	r.Deploy(e.Target, e.Outcome, e.Err)
	if e.Run != nil && e.Outcome != nil {
		r.RunWait(e.Target, e.Run.ID, e.Outcome.Upstream, e.Err)
	}
}

// Restored writes a restore (Restore).
func (r *Reporter) Restored(t core.Target, res *stateops.RestoreResult) { r.Restore(t, res) }

// LockBroken adds the lock unlock broke to the job summary.
func (r *Reporter) LockBroken(s lockmgr.Status) {
	esc := r.esc() // masked before escaped
	r.Summarize(fmt.Sprintf("### %s: %s\n\nBroke lock `%s` (lock id `%s`, held by %s since %s).\n\n",
		r.Command(), esc.Markdown(s.LockKey), esc.CodeSpan(s.LockKey), esc.CodeSpan(s.LockID), esc.Markdown(s.LockedBy), time.Unix(s.LockedAt, 0).UTC().Format(time.RFC3339)))
}

// StackEnded writes one stack of a run as it ends (Stack).
func (r *Reporter) StackEnded(env string, res runner.StackResult) { r.Stack(env, res) }

// StacksEnded sets a run's step outputs (Stacks) and posts its plans as
// one comment when asked (plan --all --github-comment, unless cancelled).
// Each stack that failed or was denied was annotated (StackEnded): the
// run's error is not annotated again (ReportError).
func (r *Reporter) StacksEnded(ctx context.Context, e runner.StacksEnded) {
	if e.None != "" {
		if e.Comment {
			r.CommentStacks(ctx, e.Env, nil, e.None)
		}
		return
	}
	r.Stacks(e.Results)
	if e.Comment && ctx.Err() == nil {
		r.CommentStacks(ctx, e.Env, e.Results, "")
	}
	if e.Err != nil || runner.Denied(e.Results) != nil {
		r.MarkAnnotated()
	}
}

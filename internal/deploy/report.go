package deploy

import (
	"context"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// Reporter hears what the use cases of this package did, once each is done
// (docs/design.md#reporting): a plan made, a deploy, destroy or import
// ended. The wiring gives the Service one (Deps.Reporter): under GitHub
// Actions, internal/ghactions writes the job summary, step outputs,
// annotations and pull request comments from these events; the terminal is
// the command's own (UI while the use case runs, its result after). A
// Reporter's failures are its own: it returns nothing to the use case.
// The state operations (stateops.Reporter) and the many-stacks runner
// (runner.Reporter) add their own events to the same value.
type Reporter interface {
	// Planned: plan made a plan (Service.Plan), or, for plan --refresh,
	// read its drift (Service.Refresh).
	Planned(ctx context.Context, e Planned)
	// Applied: Apply returned, whether it applied anything or not.
	Applied(e Applied)
}

// Planned is one plan, whole.
type Planned struct {
	Target Target
	Plan   *plan.Plan
	// Refreshed: plan --refresh read what is live; Drift is what differs
	// from actual_state, masked (docs/plan.md#drift).
	Refreshed bool
	Drift     []engine.Drift
	// Review is what the request asked to do with the plan besides
	// reporting it.
	Review Review
}

// Review asks the reporters to post a plan for review on the change the
// run is for (plan --github-comment, docs/github-actions.md#plan-comments-on-pull-requests):
// as one stack's section of run RunID's comment when RunID is set
// (docs/many-stacks.md#pull-request-comment-of-a-matrix-run). The use case
// passes it on untouched.
type Review struct {
	Comment bool
	RunID   string
}

// Applied is one deploy, destroy or import that Apply ended: its outcome
// (nil when it stopped before planning) and error, and the run it was a
// job of (nil outside a run).
type Applied struct {
	Target  Target
	Outcome *Outcome
	Err     error
	Run     *Run
}

// NoReporter hears nothing: the Reporter of a Service given none.
type NoReporter struct{}

func (NoReporter) Planned(context.Context, Planned) {}
func (NoReporter) Applied(Applied)                  {}

var _ Reporter = NoReporter{}

package deploy

import (
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/plan"
)

// UI is the one way control returns from a deploy or destroy to whoever
// runs it, while it runs (docs/design.md#the-main-job): the plan shown,
// the confirmation asked, the progress of each step. The wiring gives it
// to the Service (Deps.UI); the CLI implements it for a terminal, --json
// and each stack of a --all run. What the run did is not told through it:
// Apply returns it (Outcome), and the Observer hears it for metrics.
type UI interface {
	// ShowPlan renders the plan about to be confirmed and applied; an
	// error stops the deploy before the engines run.
	ShowPlan(p *plan.Plan) error
	// Confirm asks whether to apply p, a plan with changes: false declines
	// (ErrDeclined); --yes confirms without asking.
	Confirm(p *plan.Plan) (bool, error)
	// StepStarted and StepEnded frame the engine call of each step (the
	// live progress, docs/command-kind.md#progress); they are called from
	// the goroutines of the calls.
	executor.StepWatcher
}

// NoUI shows no plan, confirms every plan (--yes) and hears no step: the
// UI of a Service given none.
type NoUI struct{}

func (NoUI) ShowPlan(*plan.Plan) error          { return nil }
func (NoUI) Confirm(*plan.Plan) (bool, error)   { return true, nil }
func (NoUI) StepStarted(address, action string) {}
func (NoUI) StepEnded(address string)           {}

var _ UI = NoUI{}

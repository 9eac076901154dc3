package core

import (
	"time"

	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Observer receives the end of every deploy, destroy and restore that
// reached its apply, for metrics (docs/observability.md#metrics).
type Observer interface {
	DeploymentFinished(Finished)
}

// Finished is one deploy, destroy or restore that reached its apply.
type Finished struct {
	// LockKey is the target's lock key (docs/design.md#lock-keys).
	LockKey string
	// Operation is deploy, destroy or restore.
	Operation string
	// Status is the deployment's (success, failed, cancelled); a failed
	// state write makes a successful apply failed.
	Status statestore.DeploymentStatus
	// Duration is the apply and the save.
	Duration time.Duration
	// Summary is what the run did to the components: the counts and
	// failures the human line, --json and the job summary show (zero for a
	// restore, which changes no component).
	Summary executor.Summary
}

type nopObserver struct{}

func (nopObserver) DeploymentFinished(Finished) {}

// Finish reports dep and its summary to the Observer.
func (c *Core) Finish(t Target, dep statestore.Deployment, sum executor.Summary, saveErr error) {
	status := dep.Status
	if saveErr != nil && status == statestore.DeploymentSuccess {
		status = statestore.DeploymentFailed
	}
	c.Observer.DeploymentFinished(Finished{LockKey: t.LockKey(), Operation: dep.Type, Status: status,
		Duration: time.Duration(dep.DurationSeconds * float64(time.Second)), Summary: sum})
}

package deploy

import (
	"time"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// Observer receives the end of every deployment, destroy and restore that
// reached its apply, for metrics (docs/observability.md#metrics).
type Observer interface {
	// DeploymentFinished reports one run under lockKey (the target's lock
	// key): operation is deploy, destroy or restore; status is success,
	// failed or cancelled; d is the duration of its apply and save.
	DeploymentFinished(lockKey, operation, status string, d time.Duration)
}

type nopObserver struct{}

func (nopObserver) DeploymentFinished(string, string, string, time.Duration) {}

// finished reports dep to the Observer; a failed state write makes a
// successful apply a failure.
func (s *Service) finished(t Target, dep statestore.Deployment, saveErr error) {
	status := dep.Status
	if saveErr != nil && status == statestore.DeploymentSuccess {
		status = statestore.DeploymentFailed
	}
	s.d.Observer.DeploymentFinished(t.LockKey(), dep.Type, string(status), time.Duration(dep.DurationSeconds*float64(time.Second)))
}

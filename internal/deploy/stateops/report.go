package stateops

import (
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Reporter hears what the state and lock operations did, once each is
// done (docs/design.md#reporting): the same value the wiring gives the
// deploy use cases (deploy.Reporter), with the events of this package.
// A Reporter's failures are its own: it returns nothing.
type Reporter interface {
	// Restored: restore wrote res as t's state, and released its lock.
	Restored(t core.Target, res *RestoreResult)
	// LockBroken: unlock broke the lock s (as it was found).
	LockBroken(s lockmgr.Status)
}

// NoReporter hears nothing: the Reporter of Ops and Locking given none.
type NoReporter struct{}

func (NoReporter) Restored(core.Target, *RestoreResult) {}
func (NoReporter) LockBroken(lockmgr.Status)            {}

var _ Reporter = NoReporter{}

// Package core is what every use case on a stack's state stands on
// (docs/design.md#package-map): the Target a command acts on (its
// scope, its lock key, its names checked against deployer.yaml), the
// backends opened once (Core.Open), the one lease site of the use cases
// (Core.Lease), the state loaded (Core.ReadState, LoadOrNew, LoadOrHead)
// and saved by compare-and-swap under the lease, or kept in an errored
// state file when the write fails (Core.Save, ChangeSet); besides them the
// audit log, the clock, the masker of secret values, the deployments
// abandoned by an expired lock, and the Observer of finished deployments.
//
// It runs no engine and asks the user nothing: the deploy use cases
// (internal/deploy) and the state operations (internal/deploy/stateops)
// are built on it.
package core

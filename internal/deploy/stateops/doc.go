// Package stateops holds the operations on a stack's state and its
// locks that run no engine (docs/operations.md): state show, list and
// outputs, state rm and state mv, state push of a saved state file,
// restore of an earlier serial, history, secrets rotate, state locks,
// unlock (recording a broken lock's deployment as abandoned) and lock
// exec, which runs a command under a lease.
//
// They stand on the same core as the deploy use cases
// (internal/deploy/core: target, lease, load, save): methods of Ops for
// those that write a state under its lease, of Locking for those that need
// only the lock backend (Locks, Unlock, Exec); ShowState, Outputs and
// PushFile are functions of their request, run before any backend is
// written.
package stateops

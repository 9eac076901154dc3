// Package lockmgr owns deployer's lock protocol (docs/design.md#lock-protocol, docs/locking.md): the lock
// record and key formats, the Backend contract each store implements with one
// conditional operation per call, and the Manager that adds everything else
// once: backoff with jitter while waiting, the stack > service > component
// hierarchy (write, then a strongly consistent List, withdraw on conflict),
// heartbeats that cancel the holder's work when the lease is lost, verdicts
// (ACTIVE, STALE, EXPIRED) and force unlock by lockId.
//
// Files by concern: manager.go (options, defaults, NewManager), acquire.go
// (taking a lease: tries, hierarchy, backoff), wait.go (the wait queue and
// OnWait reports), lease.go (heartbeats, loss, keep, release), status.go
// (verdicts, state locks, force unlock), queue.go (the wait queue's records).
package lockmgr

// Package lockmgr owns deployer's lock protocol (docs/design.md#lock-protocol, docs/locking.md): the lock
// record and key formats, the Backend contract each store implements with one
// conditional operation per call, and the Manager that adds everything else
// once: backoff with jitter while waiting, the stack > service > component
// hierarchy (write, then a strongly consistent List, withdraw on conflict),
// heartbeats that cancel the holder's work when the lease is lost, verdicts
// (ACTIVE, STALE, EXPIRED) and force unlock by lockId.
package lockmgr

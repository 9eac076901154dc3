// Package executor applies a plan's changes with the engines (docs/plan.md
// "Parallel apply"): plan steps, the state they were planned against, the
// engines and a watcher of the steps in; each engine's results out. It
// orders the steps as a graph (internal/dag), runs independent ones
// concurrently, batches the steps of an engine that applies a batch at once,
// re-evaluates components whose inputs come from others, and splits a
// replace across engines into the old engine's delete and the new one's
// create.
//
// It owns no lease, reads and writes no state and never asks the user:
// the use cases of internal/deploy take the lease, record what it returns
// and save it.
package executor

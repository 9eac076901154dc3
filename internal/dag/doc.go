// Package dag is deployer's one graph package: a graph of nodes that wait
// for each other, its deterministic order (Graph.Order), the one error for
// a cycle (*CycleError, naming it), and one bounded ready-set executor
// (Executor) with a failure policy and a hook for engines that batch.
//
// config finds depends_on cycles with it, plan orders a plan's steps, the
// Pulumi engine orders the components of its program,
// stacks orders the stacks of a repository, and deploy runs both a plan's
// engine calls and the stacks of a run with its Executor
// (docs/design.md#package-map).
package dag

// Package stacks finds the stacks of a repository and orders them
// (docs/many-stacks.md): every deployer.yaml under a root directory
// (Discover), narrowed by an optional deployer-stacks.yaml at the root; the
// StackReference components of each, which are the edges of the graph
// between stacks (a producer before its consumers, Set.Stacks in dependency
// order, a cycle is a *CycleError naming it); and the stacks a git change
// touches (ChangedSince).
//
// It reads files and runs git, nothing else: it opens no backend and knows
// no engine. The use case that plans, deploys and destroys the stacks in
// this order is deploy.Service's RunStacks.
package stacks

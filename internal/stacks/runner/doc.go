// Package runner runs one plan, deploy or destroy over many stacks
// (docs/many-stacks.md): it selects the stacks of a repository that a run
// acts on (SelectStacks, --changed-since) and runs each as a single
// deploy runs it (deploy.Service), producers before the stacks that read
// them (destroy: readers first), up to a bound at once, a failed, denied
// or cancelled stack skipping the stacks that wait for it.
//
// It stands beside internal/stacks, which finds and orders the stacks,
// above the use cases of internal/deploy, which it calls; the CLI gives it
// the opener of each stack's Service (its backends and engines) and
// renders its results.
package runner

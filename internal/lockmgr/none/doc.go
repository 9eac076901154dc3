// Package none is the `lock: none` backend (docs/self-hosted.md#locking-off-lock-none,
// single-instance mode): locking is off. Every TryAcquire succeeds, nothing is
// stored, and List is always empty. It exists for installs where exactly one
// deployer ever runs; the CLI prints Warning on every command that uses it.
// By design it does not exclude anything, so it is not run through locktest.
package none

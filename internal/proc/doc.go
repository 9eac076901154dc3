// Package proc starts child commands (Command components, `lock exec`, the
// Pulumi CLI) in a process group of their own and stops the whole group, on
// every platform deployer is released for (.goreleaser.yaml).
//
// On Unix a group is a process group: a terminal's Ctrl-C reaches deployer
// only, and deployer forwards SIGTERM, then SIGKILL after a grace period, to
// the child and everything it started (docs/design.md#child-processes). Elsewhere (Windows) there is
// no SIGTERM: Terminate and Kill both end the child process at once.
package proc

// Package proc is deployer's one supervisor of child processes (Cmd): the
// Command engine's components, `lock exec` commands, the guard's stop
// commands and the Pulumi CLI all run through it, on every platform deployer
// is released for (.goreleaser.yaml).
//
// On Unix a child leads a process group of its own: a terminal's Ctrl-C
// reaches deployer only, and deployer forwards SIGTERM, then SIGKILL after a
// grace period, to the child and everything it started; the group dies with
// deployer, even when deployer is killed (docs/design.md#child-processes).
// Elsewhere (Windows) there is no SIGTERM: a stop ends the child process at
// once.
package proc

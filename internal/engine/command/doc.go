// Package command is the local engine of the Command kind
// (docs/command-kind.md): it runs a component's create, update and delete shell
// commands with `sh -c` in the directory of deployer.yaml, feeds them the
// component's config, previous outputs and dependencies' outputs as JSON on
// stdin and as DEPLOYER_* environment variables, streams their output with the
// component address as prefix, reads the outputs they write to the file named
// by $DEPLOYER_OUTPUTS, and enforces a per-step timeout and clean cancellation
// (SIGTERM to the process group, then SIGKILL after a grace period).
//
// It owns nothing else: ordering, state and locking belong to internal/deploy.
package command

package command

import (
	"context"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// Kinds is the Command engine's catalog: the one kind "Command". Refresh
// covers the components with a read command (Refresh); nothing previews
// (Preview).
func (e *Engine) Kinds() []engine.Kind {
	return []engine.Kind{{Name: Kind, Sections: []string{Section}, Decode: decode, Settings: planSettings,
		Requires: []config.Requirement{{Path: Section + ".create", Why: "the shell command that creates it, run in the directory of deployer.yaml"}},
		Refresh:  engine.Coverage{Covered: true, When: "with " + Section + ".read (docs/command-kind.md#drift-read)"}}}
}

// Preflight has nothing to check: commands run with the local shell.
func (e *Engine) Preflight(context.Context, []plan.Step) error { return nil }

// Preview is not supported: a command cannot tell what it would do.
func (e *Engine) Preview(context.Context, []plan.Step, engine.Inputs) (string, error) {
	return "", engine.ErrNotSupported
}

// Kill does nothing more than cancelling the context does: a cancelled
// command gets SIGTERM, then SIGKILL after the grace period (WithGrace).
func (e *Engine) Kill() {}

package command

import (
	"context"
	"errors"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/proc"
)

// Kinds is the Command engine's catalog: the one kind "Command", replaced
// when command.triggers changes (ReplaceOn). Refresh covers the components
// with a read command (Refresh); nothing previews (Preview).
func (e *Engine) Kinds() []engine.Kind { return Catalog() }

// Catalog is the kind catalog of every Command engine (Engine.Kinds), read
// without building one.
func Catalog() []engine.Kind {
	return []engine.Kind{{Name: Kind, Sections: []string{Section}, Decode: decode, Settings: planSettings,
		ReplaceOn: []string{Section + ".triggers"},
		Requires:  []config.Requirement{{Path: Section + ".create", Why: "the shell command that creates it, run in the directory of deployer.yaml"}},
		Refresh:   engine.Coverage{Covered: true, When: "with " + Section + ".read (docs/command-kind.md#drift-read)"},
		RereadOn:  []string{Section + ".read"},
		Import: config.ImportRule{Supported: true, Requires: []config.Requirement{{Path: Section + ".read",
			Why: "an import runs it with the id in DEPLOYER_IMPORT_ID and records the JSON object it prints as the component's outputs"}}}}}
}

// Preflight has nothing to check: commands run with the local shell.
func (e *Engine) Preflight(context.Context, engine.PreflightRequest) error { return nil }

// Preview is not supported: a command cannot tell what it would do.
func (e *Engine) Preview(context.Context, engine.PreviewRequest) (engine.PreviewResponse, error) {
	return engine.PreviewResponse{}, engine.ErrNotSupported
}

// ErrKilled is wrapped by the error of an Apply or Destroy whose command
// Kill stopped, or that Kill kept from starting one.
var ErrKilled = errors.New("the Command engine was stopped (second Ctrl-C)")

// Kill stops every running command at once: SIGKILL to its process group
// and to the group of every descendant (proc.Cmd.Kill), without the grace
// period a cancelled context gives. Each running Apply or Destroy then
// returns its step as cancelled with an error wrapping ErrKilled, and no
// command of this engine starts any more (docs/command-kind.md#failure-timeout-and-cancellation).
// A killed command may have done part of its work: deploy records the
// component as failed, and the next deploy runs it again.
func (e *Engine) Kill() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.killed = true
	for cmd := range e.procs {
		_ = cmd.Kill()
	}
}

// wasKilled reports whether Kill was called.
func (e *Engine) wasKilled() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.killed
}

// start starts cmd and registers it for Kill, under the lock so that Kill
// either sees it or keeps it from starting; the returned func, called once
// cmd was waited for, unregisters it.
func (e *Engine) start(cmd *proc.Cmd) (func(), error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.killed {
		return nil, ErrKilled
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e.procs[cmd] = struct{}{}
	return func() {
		e.mu.Lock()
		delete(e.procs, cmd)
		e.mu.Unlock()
	}, nil
}

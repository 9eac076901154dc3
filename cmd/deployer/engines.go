package main

import (
	"slices"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/backends"
	"github.com/deployer-dev/deployer/internal/cli"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engine/command"
	pulumiengine "github.com/deployer-dev/deployer/internal/engine/pulumi"
	"github.com/deployer-dev/deployer/internal/engine/stackref"
)

// newEngines is the one place concrete engines are built (docs/pulumi.md,
// "Engines"): the Command engine, StackReference (read from deployer's own
// state, no tool needed), and Pulumi with its backend under the
// state backend's stacks/{stack}/{env}/pulumi. Everything else sees them as
// engine.Engine.
func newEngines(cfg *config.Config, opts cli.EngineOptions) []engine.Engine {
	// A command that ignores SIGTERM is killed after 3 s, so a cancelled
	// deploy saves its state and releases the lock within 5 s.
	return []engine.Engine{
		command.New(command.WithGrace(3*time.Second), command.WithEnviron(cli.ComponentEnviron)),
		stackref.New(),
		pulumiengine.New(pulumiengine.Options{
			BackendURL:      pulumiBackendBase(cfg),
			SecretsProvider: cfg.Pulumi.SecretsProvider,
			Command:         cfg.Pulumi.Command,
			InstallPulumi:   opts.InstallPulumi,
		}),
	}
}

// knownKinds is the kind catalog of every engine, sorted: what deployer.yaml
// may name (config.KnownKinds is set from it at startup).
func knownKinds() []string {
	var names []string
	for _, e := range newEngines(&config.Config{}, cli.EngineOptions{}) {
		for _, k := range e.Kinds() {
			names = append(names, k.Name)
		}
	}
	slices.Sort(names)
	return names
}

// pulumiBackendBase is the state backend's base URL with an absolute path:
// the Pulumi backend of stack/env is {base}/stacks/{stack}/{env}/pulumi.
func pulumiBackendBase(cfg *config.Config) string {
	if strings.HasPrefix(cfg.Backend.State, "file://") {
		if dir, err := backends.FileDir(cfg.Backend.State, cfg.Dir); err == nil {
			return "file://" + dir
		}
	}
	return cfg.Backend.State
}

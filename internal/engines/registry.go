// Package engines is the engine registry: one line per engine, as
// internal/backends is for backends (docs/design.md#engines). Only
// the CLI builds engines, through New; deploy and the commands see them as
// engine.Engine, and config learns the kinds deployer.yaml may name from
// Kinds.
package engines

import (
	"slices"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engine/command"
	"github.com/deployer-dev/deployer/internal/engine/pulumi"
	"github.com/deployer-dev/deployer/internal/engine/stackref"
)

// registry is every engine deployer runs, one line each, in the order deploy
// walks them. A new engine is its own package (its kinds, their config, its
// preflight, apply and destroy) plus one line here.
var registry = []Entry{
	{Name: "command", Title: "Command", New: newCommand, Catalog: command.Catalog},
	{Name: "stackref", Title: "StackReference", New: func(Options) engine.Engine { return stackref.New() }, Catalog: stackref.Catalog},
	{Name: "pulumi", Title: "Pulumi", New: newPulumi, Catalog: pulumi.Catalog},
}

// Entry is one engine of the registry.
type Entry struct {
	Name string
	// Title names the engine in messages ("kind RDS is applied by Pulumi").
	Title string
	// New builds the engine for one run.
	New func(Options) engine.Engine
	// Catalog is the engine's kind catalog (engine.Engine.Kinds), read
	// without building an engine.
	Catalog func() []engine.Kind
}

// Options are what a run gives its engines.
type Options struct {
	// StateURL is deployer.yaml's backend.state, a file path made absolute:
	// Pulumi keeps its own backend under stacks/{stack}/{env}/pulumi there.
	StateURL string
	// SecretsProvider is pulumi.secrets_provider; PulumiCommand is
	// pulumi.command (the CLI to run, "" looks it up on PATH).
	SecretsProvider, PulumiCommand string
	// InstallPulumi installs the Pulumi CLI when missing (--install-pulumi).
	InstallPulumi bool
	// Environ is the environment Command components start from; nil is
	// deployer's own.
	Environ func() []string
	// Grace is the time a Command component without command.grace has
	// between SIGTERM and SIGKILL (deploy --grace); 0 is DefaultGrace.
	Grace time.Duration
}

// DefaultGrace is the grace of Command components when neither
// command.grace nor --grace sets one: a command that ignores SIGTERM is
// killed after 3 s, so a cancelled deploy saves its state and releases the
// lock within 5 s.
const DefaultGrace = 3 * time.Second

// MaxGrace bounds --grace as it bounds command.grace.
const MaxGrace = command.MaxGrace

// New builds every engine of the registry for one run.
func New(o Options) []engine.Engine {
	out := make([]engine.Engine, 0, len(registry))
	for _, e := range registry {
		out = append(out, e.New(o))
	}
	return out
}

// Kinds is every component kind the engines apply, sorted by name: what
// deployer.yaml may name and what config checks of each (config.WithKinds).
func Kinds() []config.Kind {
	var kinds []config.Kind
	for _, e := range registry {
		for _, k := range e.Catalog() {
			kinds = append(kinds, config.Kind{Name: k.Name, Engine: e.Title, Sections: k.Sections, Requires: k.Requires, Decode: k.Decode, Import: k.Import})
		}
	}
	slices.SortFunc(kinds, func(a, b config.Kind) int { return strings.Compare(a.Name, b.Name) })
	return kinds
}

// newCommand: a command that ignores SIGTERM is killed after o.Grace
// (DefaultGrace when 0).
func newCommand(o Options) engine.Engine {
	grace := o.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	opts := []command.Option{command.WithGrace(grace)}
	if o.Environ != nil {
		opts = append(opts, command.WithEnviron(o.Environ))
	}
	return command.New(opts...)
}

func newPulumi(o Options) engine.Engine {
	return pulumi.New(pulumi.Options{BackendURL: o.StateURL, SecretsProvider: o.SecretsProvider, Command: o.PulumiCommand, InstallPulumi: o.InstallPulumi})
}

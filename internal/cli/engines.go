package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/backends"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/pulumiadapter"
)

func init() { extraEngines = pulumiEngine }

// pulumiEngine wires the Pulumi engine (SPEC 8): its backend lives under the
// state backend, and a preflight checks the CLI before any lock is taken,
// only when the run has Pulumi kinds (issue 4: stacks of Command components
// never need it).
func pulumiEngine(f *Factory, cfg *config.Config, opts EngineOptions) ([]engine.Engine, func(string) []string, func([]string) error) {
	eng := pulumiadapter.New(pulumiadapter.Options{
		BackendURL:      pulumiBackendBase(cfg),
		SecretsProvider: cfg.Pulumi.SecretsProvider,
		Command:         cfg.Pulumi.Command,
		InstallPulumi:   opts.InstallPulumi,
	})
	preflight := func(kinds []string) error {
		var pk []string
		for _, k := range kinds {
			if pulumiadapter.IsPulumiKind(k) {
				pk = append(pk, k)
			}
		}
		if len(pk) == 0 {
			return nil
		}
		if s := cfg.Backend.State; !strings.HasPrefix(s, "file://") && !strings.HasPrefix(s, "s3://") {
			return fmt.Errorf("kinds %s run through Pulumi, whose state must live under a file:// or s3:// state backend, not %s", strings.Join(pk, ", "), s)
		}
		_, _, err := pulumiadapter.FindCLI(cfg.Pulumi.Command)
		if err != nil && opts.InstallPulumi {
			fmt.Fprintln(f.IO.ErrOut, "Installing the Pulumi CLI (--install-pulumi)...")
			_, err = pulumiadapter.InstallCLI(context.Background())
		}
		return err
	}
	return []engine.Engine{eng}, pulumiadapter.ReplaceOn, preflight
}

// checkEngines runs the engines' preflight for the components in scope
// (the Pulumi CLI) before any backend is opened: a missing CLI exits 1 and
// touches neither lock nor state (issue 4).
func (f *Factory) checkEngines(cfg *config.Config, t deploy.Target, opts EngineOptions) error {
	kinds, err := deploy.ScopeKinds(cfg, t)
	if err != nil {
		return err
	}
	_, _, preflight := f.engines(cfg, opts)
	if preflight == nil {
		return nil
	}
	return preflight(kinds)
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

package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/jsontree"
)

// Resolved is the configuration seen from one environment: what plan.Build
// diffs against the state (docs/plan.md#diff-rules).
type Resolved struct {
	Stack, Env string
	// EnvConfig is environments.{env}.config (a deep copy).
	EnvConfig map[string]any
	// Components by address "service/component".
	Components map[string]*ResolvedComponent
	// Moves are the moved: entries, in the order written
	// (docs/operations.md#moves).
	Moves []Move
	// Outputs are the stack's outputs by name (Config.Outputs, parsed).
	Outputs map[string]OutputRef
}

// ResolvedComponent is one component with its environment's overrides merged.
type ResolvedComponent struct {
	Address, Service, Name, Kind string
	// DependsOn are full addresses, in the order written, without duplicates.
	DependsOn []string
	// Config is config deep-merged with environments.{env} (never nil; a deep
	// copy, so callers may change it). Secret wrappers {secret: true, value: X}
	// are kept; plan.Unwrap removes them.
	Config map[string]any
	// Secrets are dotted config paths whose values are masked in output.
	Secrets []string
	// Settings are a copy of the kind's own sections as its engine decoded
	// them (Component.Settings); nil when it has none.
	Settings map[string]map[string]any
	// Protect is Component.Protect.
	Protect bool
	// ImportID is Component.Import's id: the existing instance the
	// component adopts when it is not in the state; "" without import:.
	ImportID string
}

// Addresses returns the component addresses sorted.
func (r *Resolved) Addresses() []string {
	return slices.Sorted(maps.Keys(r.Components))
}

// CheckEnvironment returns the error Resolve gives for env without
// resolving anything: env must be a valid name and one of environments:,
// else the error lists the known ones.
func (c *Config) CheckEnvironment(env string) error {
	if err := ValidateName("environment", env); err != nil {
		return err
	}
	if _, ok := c.Environments[env]; !ok {
		file := "deployer.yaml"
		if c.Path != "" {
			file = filepath.Base(c.Path)
		}
		known := slices.Sorted(maps.Keys(c.Environments))
		if len(known) == 0 {
			return fmt.Errorf("environment %q is not in %s, which defines no environments: add it under the environments key", env, file)
		}
		return fmt.Errorf("environment %q is not in %s (known: %s)%s: pick one of those or add it under the environments key",
			env, file, strings.Join(known, ", "), didYouMean(env, known, ""))
	}
	return nil
}

// Resolve returns the components as environment env sees them: each
// component's environments[env] override deep-merged into its config (maps
// merge key by key at every depth; any other value, lists included, replaces;
// an explicit null removes the key). env must be a valid name and one of
// environments:, else the error lists the known ones.
func (c *Config) Resolve(env string) (*Resolved, error) {
	if err := c.CheckEnvironment(env); err != nil {
		return nil, err
	}
	e := c.Environments[env]
	r := &Resolved{Stack: c.Stack, Env: env, Components: map[string]*ResolvedComponent{}, Moves: ChainedMoves(c.Moved), Outputs: c.outputRefs()}
	if e != nil {
		r.EnvConfig = jsontree.CopyMap(e.Config)
	}
	for svcName, svc := range c.Services {
		for name, comp := range svc.Components {
			addr := Address(svcName, name)
			rc := &ResolvedComponent{
				Address: addr, Service: svcName, Name: name, Kind: comp.Kind,
				Config:  jsontree.Merge(comp.Config, comp.Environments[env]),
				Secrets: slices.Clone(comp.Secrets), Protect: comp.Protect,
			}
			if comp.Import != nil {
				rc.ImportID = comp.Import.ID
			}
			for name, m := range comp.Settings {
				if rc.Settings == nil {
					rc.Settings = map[string]map[string]any{}
				}
				rc.Settings[name] = jsontree.CopyMap(m)
			}
			for _, d := range comp.DependsOn {
				if full, ok := normalizeDep(svcName, d); ok && !slices.Contains(rc.DependsOn, full) {
					rc.DependsOn = append(rc.DependsOn, full)
				}
			}
			r.Components[addr] = rc
		}
	}
	return r, nil
}

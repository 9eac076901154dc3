package executor

import (
	"slices"
	"testing"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// kinds is an engine that handles the kinds it lists; Keep asks it nothing else.
type kinds struct {
	engine.Engine
	list []string
}

func (k kinds) Handles(kind string) bool { return slices.Contains(k.list, kind) }

// Pulumi's `up` deletes what its program does not declare: every Pulumi
// component in state that this run does not change must be in Keep,
// including ones outside a --component scope.
func TestKeepListsEveryUnchangedComponentOfTheEngine(t *testing.T) {
	st := statestore.NewState("s", "e")
	for addr, kind := range map[string]string{"a/db": "RDS", "a/api": "MicroService", "b/cache": "ElastiCacheRedis", "b/site": "Command"} {
		st.Resources[addr] = &statestore.Resource{Kind: kind, DesiredConfig: map[string]any{"v": 1}}
	}
	p := &plan.Plan{Steps: []plan.Step{
		{Address: "a/api", Kind: "MicroService", Action: plan.Update}, // the --component scope
	}}
	run := p.Steps
	keep := Keep(p, st, kinds{list: []string{"RDS", "MicroService", "ElastiCacheRedis"}}, run)
	var got []string
	for _, k := range keep {
		got = append(got, k.Address)
		if k.Action != plan.NoOp || k.Config["v"] != 1 || k.Prior == nil {
			t.Errorf("kept %s should be a no-op with its config from state: %+v", k.Address, k)
		}
	}
	if want := []string{"a/db", "b/cache"}; !slices.Equal(got, want) {
		t.Fatalf("Keep = %v, want %v (not the Command component, not the step being applied)", got, want)
	}
}

package executor

import (
	"context"
	"slices"
	"testing"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// kindEngine handles the kinds it lists; it never runs.
type kindEngine struct {
	engine.Engine // nil: only Name, Handles, Apply and Destroy are called
	kinds         []string
}

func (e kindEngine) Name() string             { return "fake" }
func (e kindEngine) Handles(kind string) bool { return slices.Contains(e.kinds, kind) }
func (e kindEngine) Apply(context.Context, engine.ApplyRequest) (engine.ApplyResponse, error) {
	return engine.ApplyResponse{}, nil
}

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
	keep := Keep(p, st, kindEngine{kinds: []string{"RDS", "MicroService", "ElastiCacheRedis"}}, run)
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

package deploy

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

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
func (e kindEngine) Destroy(context.Context, engine.DestroyRequest) (engine.DestroyResponse, error) {
	return engine.DestroyResponse{}, nil
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
	keep := keepFor(p, st, kindEngine{kinds: []string{"RDS", "MicroService", "ElastiCacheRedis"}}, run)
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

func TestFailedAndCancelledStepsKeepThePreviousEntry(t *testing.T) {
	prior := &statestore.Resource{Kind: "Command", Status: "ready", DesiredConfig: map[string]any{"size": "small"},
		Lifecycle: statestore.Lifecycle{Version: 3}}
	p := &plan.Plan{Steps: []plan.Step{
		{Address: "a/db", Kind: "Command", Action: plan.Update, Config: map[string]any{"size": "large"}, Prior: prior},
		{Address: "a/new", Kind: "Command", Action: plan.Create, Config: map[string]any{"x": 1}},
		{Address: "a/ok", Kind: "Command", Action: plan.Create, Config: map[string]any{"y": 2}},
		{Address: "a/old", Kind: "Command", Action: plan.Delete, Prior: prior},
	}}
	now := time.Now()
	cs := changesFrom(p, applyRun{results: []engine.Result{
		{Address: "a/ok", Status: "ready", Outputs: map[string]any{"o": 1}},
		{Address: "a/old", Status: "deleted"},
		{Address: "a/db", Status: "failed"},
		{Address: "a/new", Status: "cancelled"},
	}}, now, "dep-1", 1)
	if db := cs.resources["a/db"]; db == nil || db.Status != "failed" || db.DesiredConfig["size"] != "small" {
		t.Errorf("failed update must keep the old desired_config marked failed: %+v", db)
	}
	if _, ok := cs.resources["a/new"]; ok {
		t.Error("a create that did not finish must not enter the state")
	}
	if r, ok := cs.resources["a/old"]; !ok || r != nil {
		t.Error("a delete must remove the entry")
	}
	if ok := cs.resources["a/ok"]; ok == nil || ok.Status != "ready" || ok.Outputs["o"] != 1 {
		t.Errorf("created entry: %+v", ok)
	}
	if cs.counts != (statestore.ResourcesChanged{Created: 1, Deleted: 1}) {
		t.Errorf("counts = %+v", cs.counts)
	}
}

// An engine that stopped part way reports what it holds of an unfinished
// step (Pulumi's URNs, outputs, actual_state): the previous entry keeps its
// desired_config, so the next plan retries, but records what exists now; a
// step holding nothing (a pending create) is not recorded.
func TestUnfinishedStepsRecordWhatTheEngineHolds(t *testing.T) {
	prior := &statestore.Resource{Kind: "PulumiResource", Status: "ready", DesiredConfig: map[string]any{"length": 1},
		Outputs: map[string]any{"id": "old"}, EngineData: statestore.EngineData(`{"urn":"urn:old","id":"old"}`)}
	p := &plan.Plan{Steps: []plan.Step{
		{Address: "a/pet", Kind: "PulumiResource", Action: plan.Update, Config: map[string]any{"length": 2}, Prior: prior},
		{Address: "a/half", Kind: "PulumiResource", Action: plan.Create, Config: map[string]any{"length": 1}},
		{Address: "a/pending", Kind: "PulumiResource", Action: plan.Create, Config: map[string]any{"length": 1}},
	}}
	cs := changesFrom(p, applyRun{results: []engine.Result{
		{Address: "a/pet", Status: engine.StatusCancelled, Outputs: map[string]any{"id": "new"},
			ActualState: map[string]any{"length": 2}, EngineData: statestore.EngineData(`{"urn":"urn:new","id":"new"}`)},
		{Address: "a/half", Status: engine.StatusCancelled, Outputs: map[string]any{"id": "h1"}, EngineData: statestore.EngineData(`{"urn":"urn:h","id":"h1"}`)},
		{Address: "a/pending", Status: engine.StatusPending},
	}}, time.Now(), "dep-1", 1)
	if pet := cs.resources["a/pet"]; pet == nil || pet.Status != "failed" || pet.DesiredConfig["length"] != 1 ||
		pet.Outputs["id"] != "new" || string(pet.EngineData) != `{"urn":"urn:new","id":"new"}` || pet.ActualState["length"] != 2 {
		t.Errorf("an unfinished update should keep its desired_config and record what Pulumi holds: %+v", pet)
	}
	if half := cs.resources["a/half"]; half == nil || half.Status != "failed" || half.Outputs["id"] != "h1" {
		t.Errorf("an unfinished create whose resource exists should be recorded, failed, with its outputs: %+v", half)
	}
	if _, ok := cs.resources["a/pending"]; ok {
		t.Error("a pending create that holds nothing must not enter the state")
	}
	if prior.Outputs["id"] != "old" {
		t.Error("the previous entry was changed in place")
	}
}

func TestSavedPlanMustMatchStateAndChanges(t *testing.T) {
	bound := func(version, image string) *plan.Binding {
		return &plan.Binding{DeployerVersion: version, Digest: plan.DigestHMAC, Components: map[string]plan.BoundComponent{
			"a/x": {Kind: "Command", Config: map[string]any{"image": image}, Settings: map[string]map[string]any{"command": {"update": "./up.sh"}}}}}
	}
	now := &plan.Plan{Stack: "s", Environment: "e", Lineage: "L", Serial: 4, Binding: bound("v1", "nginx:1.2"),
		Steps: []plan.Step{{Address: "a/x", Action: plan.Update}}}
	same := *now
	if err := checkSavedPlan(&same, now); err != nil {
		t.Fatalf("identical plan refused: %v", err)
	}
	moved := same
	moved.Serial = 3
	other := same
	other.Steps = []plan.Step{{Address: "a/x", Action: plan.Replace}}
	version := same
	version.Binding = bound("v0", "nginx:1.2")
	value := same
	value.Binding = bound("v1", "nginx:1.1")
	unbound := same
	unbound.Binding = nil
	unkeyed := same
	unkeyed.Binding = bound("v1", "nginx:1.2")
	unkeyed.Binding.Digest = "sha256" // an older deployer's digests of a state without a data key
	for name, tc := range map[string]struct {
		saved *plan.Plan
		want  string
	}{
		"serial moved":   {&moved, "state: planned serial 3 (lineage L), now serial 4 (lineage L)"},
		"changes differ": {&other, "steps[0]: planned a/x replace, now a/x update"},
		"version":        {&version, `deployer version: planned "v0", now "v1"`},
		"value":          {&value, `services.a.components.x.config.image: planned "nginx:1.1", now "nginx:1.2"`},
		"unbound":        {&unbound, "binding: planned (none"},
		"unkeyed":        {&unkeyed, "secrets digest: planned sha256 (unkeyed"},
	} {
		err := checkSavedPlan(tc.saved, now)
		if !errors.Is(err, ErrPlanStale) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a stale plan naming %q", name, err, tc.want)
		}
	}
}

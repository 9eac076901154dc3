package executor

import (
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

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
	cs := Run{Results: []engine.Result{
		{Address: "a/ok", Status: "ready", Outputs: map[string]any{"o": 1}},
		{Address: "a/old", Status: "deleted"},
		{Address: "a/db", Status: "failed"},
		{Address: "a/new", Status: "cancelled"},
	}}.Changes(p, now, "dep-1")
	if db := cs.Resources["a/db"]; db == nil || db.Status != "failed" || db.DesiredConfig["size"] != "small" {
		t.Errorf("failed update must keep the old desired_config marked failed: %+v", db)
	}
	if _, ok := cs.Resources["a/new"]; ok {
		t.Error("a create that did not finish must not enter the state")
	}
	if r, ok := cs.Resources["a/old"]; !ok || r != nil {
		t.Error("a delete must remove the entry")
	}
	if ok := cs.Resources["a/ok"]; ok == nil || ok.Status != "ready" || ok.Outputs["o"] != 1 {
		t.Errorf("created entry: %+v", ok)
	}
	if cs.Counts != (statestore.ResourcesChanged{Created: 1, Deleted: 1}) {
		t.Errorf("counts = %+v", cs.Counts)
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
	cs := Run{Results: []engine.Result{
		{Address: "a/pet", Status: engine.StatusCancelled, Outputs: map[string]any{"id": "new"},
			ActualState: map[string]any{"length": 2}, EngineData: statestore.EngineData(`{"urn":"urn:new","id":"new"}`)},
		{Address: "a/half", Status: engine.StatusCancelled, Outputs: map[string]any{"id": "h1"}, EngineData: statestore.EngineData(`{"urn":"urn:h","id":"h1"}`)},
		{Address: "a/pending", Status: engine.StatusPending},
	}}.Changes(p, time.Now(), "dep-1")
	if pet := cs.Resources["a/pet"]; pet == nil || pet.Status != "failed" || pet.DesiredConfig["length"] != 1 ||
		pet.Outputs["id"] != "new" || string(pet.EngineData) != `{"urn":"urn:new","id":"new"}` || pet.ActualState["length"] != 2 {
		t.Errorf("an unfinished update should keep its desired_config and record what Pulumi holds: %+v", pet)
	}
	if half := cs.Resources["a/half"]; half == nil || half.Status != "failed" || half.Outputs["id"] != "h1" {
		t.Errorf("an unfinished create whose resource exists should be recorded, failed, with its outputs: %+v", half)
	}
	if _, ok := cs.Resources["a/pending"]; ok {
		t.Error("a pending create that holds nothing must not enter the state")
	}
	if prior.Outputs["id"] != "old" {
		t.Error("the previous entry was changed in place")
	}
}

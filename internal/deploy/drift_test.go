package deploy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

func TestMaskDriftLeavesNoSecret(t *testing.T) {
	drift := []engine.Drift{{
		Address:     "app/db",
		ActualState: map[string]any{"endpoint": "db.internal", "master_password": "hunter2", "token": map[string]any{"secret": true, "value": "tok-1"}},
		Fields: []plan.FieldDiff{
			{Path: "outputs.master_password", Old: "hunter2", New: "hunter3", Op: "change"},
			{Path: "outputs.replicas", Old: 2, New: 3, Op: "change"},
			{Path: "outputs.token", Old: map[string]any{"secret": true, "value": "tok-1"}, New: "tok-2", Op: "change"},
		},
	}}
	maskDrift(drift)
	want := []engine.Drift{{
		Address:     "app/db",
		ActualState: map[string]any{"endpoint": "db.internal", "master_password": plan.Masked, "token": plan.Masked},
		Fields: []plan.FieldDiff{
			{Path: "outputs.master_password", Old: plan.Masked, New: plan.Masked, Op: "change", Sensitive: true},
			{Path: "outputs.replicas", Old: 2, New: 3, Op: "change"},
			{Path: "outputs.token", Old: plan.Masked, New: plan.Masked, Op: "change", Sensitive: true},
		},
	}}
	if diff := cmp.Diff(want, drift); diff != "" {
		t.Errorf("masked drift (-want +got):\n%s", diff)
	}
}

package pulumi

import (
	"testing"

	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// TestImportOnlyKindsOfOneResource: the kinds of one resource can be
// imported (docs/operations.md#import); MicroService, several resources
// under one component, cannot, so validation refuses its import: block.
func TestImportOnlyKindsOfOneResource(t *testing.T) {
	want := map[string]bool{"PulumiResource": true, "RDS": true, "ElastiCacheRedis": true, "MicroService": false}
	for _, k := range Catalog() {
		if w, ok := want[k.Name]; ok && k.Import.Supported != w {
			t.Errorf("%s: Import.Supported = %v, want %v", k.Name, k.Import.Supported, w)
		}
	}
}

// TestImportOf: an Import step declares its resource with its id; so does
// a component whose import failed after Pulumi adopted the resource (its
// entry failed, imported, never applied), so Pulumi refuses to replace it;
// a ready imported component, one whose later update failed, or a created
// one is declared without.
func TestImportOf(t *testing.T) {
	imported := func(status statestore.ResourceStatus) *statestore.Resource {
		return &statestore.Resource{Status: status, Lifecycle: statestore.Lifecycle{ImportedID: "dt-1"}}
	}
	appliedFailed := imported(statestore.ResourceFailed)
	appliedFailed.Deployment = &statestore.ResourceDeployment{LastDeploymentID: "d-1"}
	for _, tc := range []struct {
		name string
		step plan.Step
		want string
	}{
		{"import", plan.Step{Action: plan.Import, ImportID: "dt-1"}, "dt-1"},
		{"failed import", plan.Step{Action: plan.Update, Prior: imported(statestore.ResourceFailed)}, "dt-1"},
		{"imported", plan.Step{Action: plan.Update, Prior: imported(statestore.ResourceReady)}, ""},
		{"failed update after the import", plan.Step{Action: plan.Update, Prior: appliedFailed}, ""},
		{"created", plan.Step{Action: plan.Create}, ""},
	} {
		if got := importOf(tc.step); got != tc.want {
			t.Errorf("%s: importOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

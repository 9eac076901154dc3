package pulumi

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"

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

// TestImportDiffs: a preview that imports a component's resource and then
// updates it refuses that import, naming the component, the id, the step
// and the differing fields (never values); a replacement reads "replace";
// an import alone, a resource kept the same, or a change of another
// component's resource refuse nothing.
func TestImportDiffs(t *testing.T) {
	urn := func(name string) string { return "urn:pulumi:dev::s::deployertest:index:RandomName::" + name }
	ev := func(op apitype.OpType, name string, diffs ...string) apitype.StepEventMetadata {
		return apitype.StepEventMetadata{Op: op, URN: urn(name), Type: "deployertest:index:RandomName", Diffs: diffs,
			New: &apitype.StepEventStateMetadata{URN: urn(name)}}
	}
	db := plan.Step{Address: "data/db", Kind: "PulumiResource", Action: plan.Import, ImportID: "dt-1"}
	if err := importDiffs([]plan.Step{db}, []apitype.StepEventMetadata{ev(apitype.OpImport, "data-db"), ev(apitype.OpUpdate, "app-api", "length")}); err != nil {
		t.Errorf("an import alone should pass: %v", err)
	}
	err := importDiffs([]plan.Step{db}, []apitype.StepEventMetadata{ev(apitype.OpImport, "data-db"), ev(apitype.OpUpdate, "data-db", "name", "length")})
	var d *ImportDiffError
	if !errors.As(err, &d) || d.Address != "data/db" || d.ID != "dt-1" || !reflect.DeepEqual(d.Fields, []string{"length", "name"}) ||
		!strings.Contains(err.Error(), `data/db: the live resource "dt-1" differs from the config in length, name: Pulumi would import it, then update it`) {
		t.Errorf("an import then update should be refused naming data/db, dt-1 and the fields: %v", err)
	}
	err = importDiffs([]plan.Step{db}, []apitype.StepEventMetadata{ev(apitype.OpCreateReplacement, "data-db", "keepers"), ev(apitype.OpReplace, "data-db", "keepers")})
	if err == nil || !strings.Contains(err.Error(), "in keepers: Pulumi would import it, then replace it,") {
		t.Errorf("an import then replace should be refused as a replace: %v", err)
	}
}

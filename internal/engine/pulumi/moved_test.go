package pulumi

import (
	"slices"
	"testing"

	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// TestFormerNames: a moved component is declared with the Pulumi names it
// may still have: the moved: source and the name its recorded URNs carry
// (the shortest child name of a multi-resource kind); never its own name.
func TestFormerNames(t *testing.T) {
	single := (&Info{URN: "urn:pulumi:dev::s::deployer:component:PulumiResource$t:index:R::data-db", ID: "1"}).Data()
	multi := (&Info{URNs: []string{
		"urn:pulumi:dev::s::deployer:component:MicroService$aws:ecs/service:Service::app-api",
		"urn:pulumi:dev::s::deployer:component:MicroService$aws:appautoscaling/policy:Policy::app-api-cpu",
	}}).Data()
	for _, tc := range []struct {
		name string
		step plan.Step
		want []string
	}{
		{"moved", plan.Step{Address: "data/database", MovedFrom: "data/db",
			Prior: &statestore.Resource{Kind: "PulumiResource", EngineData: single}}, []string{"data-db"}},
		{"state mv", plan.Step{Address: "data/store", Prior: &statestore.Resource{Kind: "PulumiResource", EngineData: single}}, []string{"data-db"}},
		{"multi", plan.Step{Address: "web/api", Prior: &statestore.Resource{Kind: "MicroService", EngineData: multi}}, []string{"app-api"}},
		{"not moved", plan.Step{Address: "data/db", Prior: &statestore.Resource{Kind: "PulumiResource", EngineData: single}}, nil},
		{"new", plan.Step{Address: "data/db"}, nil},
		{"was Command", plan.Step{Address: "data/x", Prior: &statestore.Resource{Kind: "Command", EngineData: single}}, nil},
	} {
		if got := formerNames(tc.step); !slices.Equal(got, tc.want) {
			t.Errorf("%s: formerNames = %v, want %v", tc.name, got, tc.want)
		}
	}
}

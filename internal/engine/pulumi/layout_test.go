package pulumi

import (
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// TestWrapperOf: a component whose recorded URNs are under a wrapper of the
// previous layout gets that wrapper's URN (its resources are aliased from
// it); one already at the stack's root, new or of another engine, none.
func TestWrapperOf(t *testing.T) {
	old := (&Info{URNs: []string{
		"urn:pulumi:dev::s::deployer:component:MicroService$aws:ecs/service:Service::app-api",
		"urn:pulumi:dev::s::deployer:component:MicroService$aws:appautoscaling/policy:Policy::app-api-cpu",
	}}).Data()
	root := (&Info{URN: "urn:pulumi:dev::s::t:index:R::data-db", ID: "1"}).Data()
	for _, tc := range []struct {
		name string
		step plan.Step
		want string
	}{
		{"previous layout", plan.Step{Address: "app/api", Prior: &statestore.Resource{Kind: "MicroService", EngineData: old}},
			"urn:pulumi:dev::s::deployer:component:MicroService::app-api"},
		{"root", plan.Step{Address: "data/db", Prior: &statestore.Resource{Kind: "PulumiResource", EngineData: root}}, ""},
		{"new", plan.Step{Address: "data/db"}, ""},
	} {
		if got := wrapperOf(tc.step); got != tc.want {
			t.Errorf("%s: wrapperOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestResourceNamesMustNotClash: the name of a resource tells its
// component, so a MicroService app/web (whose policy is app-web-cpu) and a
// component app/web-cpu are refused together.
func TestResourceNamesMustNotClash(t *testing.T) {
	err := pulumiRunErr([]Component{
		{Address: "app/web", Kind: "MicroService", Config: map[string]any{"image": map[string]any{"repository": "nginx"}}},
		{Address: "app/web-cpu", Kind: "PulumiResource", Config: map[string]any{"type": "random:index/randomPet:RandomPet"}},
	})
	if err == nil || !strings.Contains(err.Error(), `components app/web and app/web-cpu both map to the Pulumi name "app-web-cpu"`) {
		t.Fatalf("error = %v, want the clash named", err)
	}
}

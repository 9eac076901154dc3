package plan

import (
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// A stack output naming a key its unchanged component does not have fails
// the plan, naming the output and the keys the component has, instead of
// being left out without a word; the same output of a component the plan
// changes or destroys is not refused (its outputs are not known yet, or go).
func TestAStackOutputOfAKeyTheComponentLacksFailsThePlan(t *testing.T) {
	cfg := map[string]any{"size": 1}
	api := res("Command", cfg)
	api.Outputs = map[string]any{"url": "http://api", "port": 8080}
	st := state(map[string]*statestore.Resource{"app/api": api})
	d := desired(comp("app/api", "Command", cfg))
	d.Outputs = map[string]config.OutputRef{"api_url": {Address: "app/api", Path: []string{"url"}}, "api_uri": {Address: "app/api", Path: []string{"uri"}}}

	_, err := Build(d, st, Options{Now: fixedNow})
	if err == nil || !strings.Contains(err.Error(), "outputs.api_uri") || !strings.Contains(err.Error(), "it has: port, url") {
		t.Fatalf("plan of an output naming a missing key: %v, want an error naming outputs.api_uri and the keys app/api has", err)
	}

	changed := desired(comp("app/api", "Command", map[string]any{"size": 2}))
	changed.Outputs = d.Outputs
	if _, err := Build(changed, st, Options{Now: fixedNow}); err != nil {
		t.Errorf("plan that updates app/api: %v, want the output known after apply", err)
	}
	if _, err := Build(d, st, Options{Now: fixedNow, Destroy: true}); err != nil {
		t.Errorf("destroy plan: %v, want the outputs removed", err)
	}
}

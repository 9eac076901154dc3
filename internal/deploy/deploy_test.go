package deploy

import (
	"errors"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
)

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

// --parallelism wins, then deployer.yaml's parallelism: (with
// DEPLOYER_PARALLELISM applied by config), then the default.
func TestApplyParallelismComesFromTheFlagThenTheConfig(t *testing.T) {
	for _, c := range []struct {
		flag, config, want int
	}{
		{2, 4, 2},
		{0, 4, 4},
		{0, 0, config.DefaultParallelism},
		{1, 0, 1},
	} {
		req := ApplyRequest{Config: &config.Config{Parallelism: c.config}, Parallelism: c.flag}
		if got := req.parallelism(); got != c.want {
			t.Errorf("flag %d, config %d: %d, want %d", c.flag, c.config, got, c.want)
		}
	}
}

package stackref

import (
	"context"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engine/enginetest"
	"github.com/deployer-dev/deployer/internal/plan"
)

// The StackReference engine passes the engine conformance suite as a data
// source: the referenced stack "base" is a state whose component base/db
// holds the version of the step last asked for; version 3 references the
// stack's "staging" environment (a replace).
func TestConformance(t *testing.T) {
	var version int
	enginetest.Run(t, enginetest.Fixture{
		New: func(*testing.T) engine.Engine { return New() },
		Inputs: func(*testing.T) engine.Inputs {
			return engine.Inputs{Stack: "app", Env: "dev", DeploymentID: "dep-test",
				StackOutputs: func(_ context.Context, stack, env string) (engine.StackView, error) {
					if stack != "base" {
						t.Errorf("read stack %s/%s, want base", stack, env)
					}
					return engine.StackView{Components: map[string]map[string]any{"base/db": {"version": version, "env": env}}}, nil
				}}
		},
		Step: func(_ *testing.T, addr string, v int) plan.Step {
			version = v
			cfg := map[string]any{"stack": "base"}
			if v >= 3 {
				cfg["environment"] = "staging"
			}
			svc, comp, _ := strings.Cut(addr, "/")
			return plan.Step{Address: addr, Service: svc, Component: comp, Kind: Kind, Config: cfg}
		},
		Version: func(outputs map[string]any) any {
			outs, _ := outputs["outputs"].(map[string]any)
			db, _ := outs["base/db"].(map[string]any)
			return db["version"]
		},
	})
}

package pulumi_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engine/enginetest"
	"github.com/deployer-dev/deployer/internal/engine/pulumi"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// TestRealPulumiConformance: the Pulumi engine passes the engine
// conformance suite against the real Pulumi CLI and the project's test
// provider (scripts/test-servers/pulumi.sh builds both; the test fails in
// CI and skips elsewhere when they are missing). A component is a
// deployertest RandomName whose inputs, copied to its outputs, carry the
// version; version 3 changes its keepers, which the provider can only
// replace. Each case is its own project in one file:// backend; Live asks
// the CLI (pulumi stack export) whether the component holds a resource.
func TestRealPulumiConformance(t *testing.T) {
	cli, _ := testenv.Pulumi(t)
	t.Setenv("PULUMI_CONFIG_PASSPHRASE", "deployer-conformance")
	base := t.TempDir()
	runs := 0
	enginetest.Run(t, enginetest.Fixture{
		New: func(*testing.T) engine.Engine {
			return pulumi.New(pulumi.Options{BackendURL: "file://" + base, Command: cli})
		},
		Inputs: func(t *testing.T) engine.Inputs {
			runs++
			return engine.Inputs{Stack: fmt.Sprintf("conformance-%d", runs), Env: "dev", Dir: t.TempDir(),
				DeploymentID: fmt.Sprintf("dep-%d", runs)}
		},
		Step: func(_ *testing.T, addr string, v int) plan.Step {
			keepers := 1
			if v >= 3 {
				keepers = 2
			}
			return step(addr, map[string]any{"type": "deployertest:index:RandomName",
				"properties": map[string]any{"length": 1, "version": v, "keepers": map[string]any{"generation": keepers}}})
		},
		Version: func(outputs map[string]any) any {
			props, _ := outputs["properties"].(map[string]any)
			return props["version"]
		},
		Slow: func(_ *testing.T, addr string) (plan.Step, string) {
			st := step(addr, map[string]any{"type": "deployertest:index:Slow", "properties": map[string]any{"seconds": 600}})
			return st, "deployertest:index:Slow " + strings.ReplaceAll(addr, "/", "-") + " creating"
		},
		Live: func(t *testing.T, in engine.Inputs, addr string) bool {
			return holds(t, cli, pulumi.BackendFor("file://"+base, in.Stack, in.Env), in.Stack, in.Env, addr)
		},
	})
}

func step(addr string, cfg map[string]any) plan.Step {
	svc, comp, _ := strings.Cut(addr, "/")
	return plan.Step{Address: addr, Service: svc, Component: comp, Kind: "PulumiResource", Config: cfg}
}

// holds reports whether Pulumi's state of stack/env (pulumi stack export)
// has a resource of the component at addr: at the stack's root, named
// after it (docs/pulumi.md#resource-layout).
func holds(t *testing.T, cli, backend, stack, env, addr string) bool {
	t.Helper()
	cmd := exec.Command(cli, "stack", "export", "--stack", pulumi.DIYOrganization+"/"+stack+"/"+env, "--non-interactive")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PULUMI_BACKEND_URL="+backend)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pulumi stack export of %s/%s: %v\n%s", stack, env, err, out)
	}
	var dep struct {
		Deployment struct {
			Resources []struct {
				URN    string `json:"urn"`
				Parent string `json:"parent"`
			} `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal(out, &dep); err != nil {
		t.Fatalf("pulumi stack export: %v\n%s", err, out)
	}
	name := "::" + strings.ReplaceAll(addr, "/", "-")
	for _, r := range dep.Deployment.Resources {
		if strings.HasSuffix(r.URN, name) && strings.Contains(r.Parent, "::pulumi:pulumi:Stack::") {
			return true
		}
	}
	return false
}

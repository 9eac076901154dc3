package pulumiadapter

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// requirePulumi skips when the Pulumi CLI is absent. The CLI cannot be
// installed from the registries here, in CI either, so this skip is
// deliberate everywhere; DEPLOYER_PULUMI_E2E=1 turns it into a failure where
// the CLI is meant to exist.
func requirePulumi(t *testing.T) string {
	t.Helper()
	path, _, err := FindCLI("")
	if err != nil {
		if os.Getenv("DEPLOYER_PULUMI_E2E") == "1" {
			t.Fatalf("DEPLOYER_PULUMI_E2E=1 but %v", err)
		}
		t.Skipf("pulumi CLI not on PATH (%v): skipping the Pulumi end-to-end test, in CI too (CI=%q), since the CLI is not installable from the registries here; set DEPLOYER_PULUMI_E2E=1 where it is installed to require it", err, os.Getenv("CI"))
	}
	return path
}

// TestPulumiLocalEndToEnd runs examples/pulumi-local with the real CLI and
// no cloud account: base, then app reading base through StackReference;
// redeploy without changes; the stacks are listed by `pulumi stack ls`
// against the same backend; destroy.
func TestPulumiLocalEndToEnd(t *testing.T) {
	cli := requirePulumi(t)
	if os.Getenv("PULUMI_CONFIG_PASSPHRASE") == "" {
		t.Setenv("PULUMI_CONFIG_PASSPHRASE", "local-example")
	}
	t.Setenv("PULUMI_HOME", filepath.Join(t.TempDir(), "home"))
	base := t.TempDir()
	e := New(Options{BackendURL: "file://" + base, Command: cli})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	pet := plan.Step{Address: "base/pet", Kind: "PulumiResource", Action: plan.Create,
		Config: map[string]any{"type": "random:index/randomPet:RandomPet", "properties": map[string]any{"length": 2}}}
	var progress bytes.Buffer
	baseIn := engine.Inputs{Stack: "pulumi-local-base", Env: "dev", DeploymentID: "dep-1", Progress: &progress}
	res, err := e.Apply(ctx, []plan.Step{pet}, baseIn)
	if err != nil {
		t.Fatalf("deploy base: %v\n%s", err, progress.String())
	}
	petID, _ := res[0].Outputs["id"].(string)
	if res[0].Status != "ready" || petID == "" || res[0].Pulumi == nil || !strings.Contains(res[0].Pulumi.URN, "RandomPet::base-pet") {
		t.Fatalf("base result = %+v, want ready with the pet's id and urn", res[0])
	}

	ref := plan.Step{Address: "upstream/base", Kind: "StackReference", Action: plan.Create,
		Config: map[string]any{"stack": "pulumi-local-base"}}
	appPet := plan.Step{Address: "app/pet", Kind: "PulumiResource", Action: plan.Create, DependsOn: []string{"upstream/base"},
		Config: map[string]any{"type": "random:index/randomPet:RandomPet",
			"properties": map[string]any{"prefix": "${upstream/base.outputs.base/pet.id}", "length": 1}}}
	appIn := engine.Inputs{Stack: "pulumi-local-app", Env: "dev", DeploymentID: "dep-2", Progress: &progress}
	res, err = e.Apply(ctx, []plan.Step{ref, appPet}, appIn)
	if err != nil {
		t.Fatalf("deploy app: %v\n%s", err, progress.String())
	}
	if got, _ := res[1].Outputs["id"].(string); !strings.HasPrefix(got, petID+"-") {
		t.Errorf("app pet = %q, want the prefix %q read through the stack reference", got, petID)
	}

	// Redeploy with no changes: every component kept, Pulumi changes nothing.
	keep := func(s plan.Step, r engine.Result) plan.Step {
		s.Action = plan.NoOp
		s.Prior = &statestore.Resource{DesiredConfig: s.Config, ActualState: r.ActualState}
		return s
	}
	appIn.Keep = []plan.Step{keep(ref, res[0]), keep(appPet, res[1])}
	out, err := e.Preview(ctx, nil, appIn)
	if err != nil || strings.Contains(out, "create") || strings.Contains(out, "update") {
		t.Errorf("preview of an unchanged stack = %q, %v; want only same", out, err)
	}

	ls := exec.CommandContext(ctx, cli, "stack", "ls", "--all", "--non-interactive")
	ls.Env = append(os.Environ(), "PULUMI_BACKEND_URL="+BackendFor("file://"+base, "pulumi-local-app", "dev"))
	ls.Dir = t.TempDir()
	if b, err := ls.CombinedOutput(); err != nil || !strings.Contains(string(b), "dev") {
		t.Errorf("pulumi stack ls against the backend: %v\n%s", err, b)
	}

	appIn.Keep = nil
	if _, err := e.Destroy(ctx, []plan.Step{{Address: "app/pet", Kind: "PulumiResource", Action: plan.Delete},
		{Address: "upstream/base", Kind: "StackReference", Action: plan.Delete}}, appIn); err != nil {
		t.Errorf("destroy app: %v", err)
	}
	if _, err := e.Destroy(ctx, []plan.Step{{Address: "base/pet", Kind: "PulumiResource", Action: plan.Delete}}, baseIn); err != nil {
		t.Errorf("destroy base: %v", err)
	}
}

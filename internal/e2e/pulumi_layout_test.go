//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealPulumiUpgradeFromWrapperLayout: a stack deployed by the previous
// version, which kept each component's resources under a component resource
// "deployer:component:{Kind}" (testdata/pulumi-wrapped-layout: deployer's
// and Pulumi's state as that version left them, with data/db protected and
// data/cred holding a secret), keeps every resource when this version
// deploys it: the plan has no changes before, the first deploy (an update
// of app/api) makes the provider update that one resource and create,
// replace or delete nothing, Pulumi's state no longer holds a wrapper, the
// resources keep their ids and data/db its protect, and after it the plan
// has no changes and a refresh no drift (docs/pulumi.md#resource-layout).
func TestRealPulumiUpgradeFromWrapperLayout(t *testing.T) {
	pp := newPulumiProject(t)
	j := providerJournal(filepath.Join(pp.dir, "provider.journal"))
	t.Setenv("DEPLOYERTEST_JOURNAL", string(j))
	copyTree(t, filepath.Join("testdata", "pulumi-wrapped-layout", "state"), filepath.Join(pp.dir, ".deployer"))
	yaml, err := os.ReadFile(filepath.Join("testdata", "pulumi-wrapped-layout", "deployer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := pp.stack("wrapped", string(yaml))
	before := pp.export("wrapped", "dev").held()
	if len(before) != 3 {
		t.Fatalf("the previous layout's state should hold data/db, data/cred and app/api: %+v", before)
	}
	if r := p.mustRun(0, "plan", "-e", "dev", "--refresh"); !strings.Contains(r.stdout, "No drift") || !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("before the upgrade deploy, refresh should find the resources under their wrappers, no drift:\n%s", r)
	}

	p.write("deployer.yaml", strings.Replace(string(yaml), "length: 2", "length: 3", 1))
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr+r.stdout, "0 created, 1 updated, 0 deleted") {
		t.Errorf("the upgrade deploy should update app/api only:\n%s", r)
	}
	if c, d, u := j.count(t, "start", "create"), j.count(t, "start", "delete"), j.count(t, "done", "update"); c != 0 || d != 0 || u != 1 {
		t.Errorf("the provider should update app/api only: %d creates, %d deletes, %d updates\n%s", c, d, u, r)
	}
	exp := pp.export("wrapped", "dev")
	for _, res := range exp.Resources {
		if strings.HasPrefix(res.Type, "deployer:component:") || strings.Contains(res.URN, "deployer:component:") {
			t.Errorf("Pulumi's state still holds %s after the upgrade deploy", res.URN)
		}
	}
	after := exp.held()
	for addr, b := range before {
		if after[addr].ID != b.ID {
			t.Errorf("%s: id %q after the upgrade, %q before", addr, after[addr].ID, b.ID)
		}
	}
	if !after["data/db"].Protect {
		t.Errorf("data/db should stay protected in Pulumi's state: %+v", after["data/db"])
	}
	st := pp.pulumiState("wrapped", "dev")
	if api := st.Resources["app/api"].Pulumi; api == nil || api.URN != after["app/api"].URN {
		t.Errorf("deployer's state should record app/api's URN at the stack's root %s: %+v", after["app/api"].URN, api)
	}
	if pw, _ := st.Resources["data/cred"].Outputs["properties"].(map[string]any)["password"].(map[string]any); pw["deployer:secret"] == nil {
		t.Errorf("data/cred's password should stay sealed in deployer's state: %v", st.Resources["data/cred"].Outputs)
	}
	if r := p.mustRun(0, "plan", "-e", "dev", "--refresh"); !strings.Contains(r.stdout, "No drift") || !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("after the upgrade deploy the plan should have no changes and refresh no drift:\n%s", r)
	}
	if r := p.mustRun(6, "destroy", "-e", "dev", "--yes"); !strings.Contains(r.stderr, "data/db is protected") {
		t.Errorf("deployer should refuse to destroy the protected data/db:\n%s", r)
	}
	if out, err := pp.pulumiCmd("wrapped", "dev", "state", "delete", after["data/db"].URN, "--stack", "organization/wrapped/dev", "--yes").CombinedOutput(); err == nil || !strings.Contains(string(out), "protected") {
		t.Errorf("Pulumi itself should refuse to delete the protected data/db: %v\n%s", err, out)
	}
}

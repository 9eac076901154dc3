//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kind change across engines (docs/plan.md#actions): the existing
// instance is deleted by the engine of its old kind, then the new one is
// created by the engine of its new kind, in the step's place in the order.

// kindYAML is the stack of these tests, app/thing written as thing.
func kindYAML(thing string) string {
	return "stack: kinds\nbackend: {state: file://../.deployer, lock: file://../.deployer}\nenvironments: {dev: {}}\n" +
		"services: {app: {components: {thing: " + thing + "}}}\n"
}

var (
	kindPulumiYAML  = kindYAML(`{kind: PulumiResource, config: {type: "deployertest:index:RandomName", properties: {length: 1}}}`)
	kindCommandYAML = kindYAML(`{kind: Command, config: {size: 1}, command: {create: "echo made >> made.txt", delete: "test ! -f fail-delete && echo gone >> deleted.txt"}}`)
)

// TestRealPulumiKindChangeToCommand: PulumiResource -> Command deletes the
// Pulumi resource through Pulumi (it is no longer in Pulumi's state), then
// runs the Command's create.
func TestRealPulumiKindChangeToCommand(t *testing.T) {
	pp := newPulumiProject(t)
	p := pp.stack("kinds", kindPulumiYAML)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if comps := pp.pulumiComponents("kinds", "dev"); strings.Join(comps, ",") != "app/thing" {
		t.Fatalf("Pulumi's state should hold app/thing after the first deploy: %v", comps)
	}

	p.write("deployer.yaml", kindCommandYAML)
	r := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "± thing (Command) replace") ||
		!strings.Contains(r.stdout, "the pulumi engine deletes the existing PulumiResource first") {
		t.Errorf("the plan should say the pulumi engine deletes the existing PulumiResource: %s", r)
	}
	var pj struct {
		Steps []struct {
			Address   string `json:"address"`
			Action    string `json:"action"`
			DeletedBy string `json:"deleted_by"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(p.mustRun(0, "plan", "-e", "dev", "--json").stdout), &pj); err != nil {
		t.Fatal(err)
	}
	if len(pj.Steps) != 1 || pj.Steps[0].Action != "replace" || pj.Steps[0].DeletedBy != "pulumi" {
		t.Errorf("plan --json should show the replace deleted by pulumi: %+v", pj.Steps)
	}

	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if m := deploySummary.FindStringSubmatch(r.stdout); m == nil || m[3] != "1" || m[4] != "0" {
		t.Errorf("the kind change should be reported as one replace: %s", r)
	}
	if comps := pp.pulumiComponents("kinds", "dev"); len(comps) != 0 {
		t.Errorf("Pulumi's state still holds app/thing after its kind changed to Command: %v\n%s", comps, r)
	}
	if got := string(p.read("made.txt")); got != "made\n" {
		t.Errorf("the Command's create should have run once, made.txt = %q", got)
	}
	st := pp.stateOf("kinds", "dev")
	if res := st.Resources["app/thing"]; res.Kind != "Command" || res.Status != "ready" {
		t.Errorf("state should hold app/thing as a ready Command: %+v", res)
	}
	if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("the plan after the kind change should have no changes: %s", r)
	}
}

// TestRealPulumiKindChangeFromCommand: Command -> PulumiResource runs the
// Command's recorded delete, then creates the Pulumi resource; a delete
// that fails stops the create, keeps the Command in the state (failed) and
// the next deploy retries both.
func TestRealPulumiKindChangeFromCommand(t *testing.T) {
	pp := newPulumiProject(t)
	p := pp.stack("kinds", kindCommandYAML)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")

	p.write("deployer.yaml", kindPulumiYAML)
	r := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "± thing (PulumiResource) replace") ||
		!strings.Contains(r.stdout, "the command engine deletes the existing Command first") ||
		!strings.Contains(r.stdout, "delete runs: test ! -f fail-delete && echo gone >> deleted.txt") {
		t.Errorf("the plan should say the command engine deletes the existing Command, and what it runs: %s", r)
	}

	// The recorded delete fails: nothing is created, the Command stays.
	p.write("fail-delete", "")
	r = p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if _, err := os.Stat(filepath.Join(pp.dir, ".deployer", "stacks", "kinds", "dev", "pulumi")); !os.IsNotExist(err) {
		t.Errorf("a failed delete of the old instance must stop the create; Pulumi ran (%v)\n%s", err, r)
	}
	if !strings.Contains(r.stdout+r.stderr, "delete") || strings.Contains(r.stdout+r.stderr, "[pulumi]") {
		t.Errorf("the deploy should fail on the delete, before Pulumi runs: %s", r)
	}
	st := pp.stateOf("kinds", "dev")
	if res := st.Resources["app/thing"]; res.Kind != "Command" || res.Status != "failed" || st.DeploymentHistory[0].Status != "failed" {
		t.Errorf("state should keep app/thing as a failed Command after its delete failed: %+v %+v", res, st.DeploymentHistory[0])
	}

	if err := os.Remove(filepath.Join(p.dir, "fail-delete")); err != nil {
		t.Fatal(err)
	}
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if m := deploySummary.FindStringSubmatch(r.stdout); m == nil || m[3] != "1" {
		t.Errorf("the retry should replace app/thing: %s", r)
	}
	if got := string(p.read("deleted.txt")); got != "gone\n" {
		t.Errorf("the Command's delete should have run once, deleted.txt = %q", got)
	}
	if comps := pp.pulumiComponents("kinds", "dev"); strings.Join(comps, ",") != "app/thing" {
		t.Errorf("Pulumi's state should hold app/thing after the kind change: %v", comps)
	}
	st = pp.stateOf("kinds", "dev")
	if res := st.Resources["app/thing"]; res.Kind != "PulumiResource" || res.Status != "ready" {
		t.Errorf("state should hold app/thing as a ready PulumiResource: %+v", res)
	}
	if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("the plan after the kind change should have no changes: %s", r)
	}
	pp.stateListsPulumi("kinds", "dev")
}

//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSavedPlanIsBoundToTheStateItWasMadeAgainst(t *testing.T) {
	p := newShop(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(shopYAML, "tag: v1", "tag: v2", 1))
	r := p.mustRun(0, "plan", "-e", "dev", "--out", "v2.plan")
	if !strings.Contains(r.stderr, "Apply it with: deployer deploy --plan v2.plan") {
		t.Errorf("plan --out should say how to apply it: %s", r)
	}
	p.mustRun(0, "plan", "-e", "dev", "--out", "stale.plan")
	p.mustRun(0, "deploy", "-e", "dev", "--plan", "v2.plan", "--yes")
	if st := p.state("shop", "dev"); st.Serial != 2 {
		t.Fatalf("deploy --plan should write serial 2, got %d", st.Serial)
	}
	r = p.mustRun(4, "deploy", "-e", "dev", "--plan", "stale.plan", "--yes")
	if !strings.Contains(r.stderr, "serial 1") || !strings.Contains(r.stderr, "serial 2") || !strings.Contains(r.stderr, "plan --out") {
		t.Errorf("a stale plan should be refused naming both serials and the fix: %s", r)
	}
}

// A saved plan is the review: deploy --plan FILE takes its stack and
// environment from the file and asks nothing; a plan of another
// environment is named as such; show prints it.
func TestSavedPlanFlowsFromPlanToDeploy(t *testing.T) {
	p := newShop(t)
	r := p.mustRun(0, "plan", "-e", "dev", "--out", "dev.plan")
	if !strings.Contains(r.stderr, "Saved the plan of shop/dev to dev.plan") || !strings.Contains(r.stderr, "Apply it with: deployer deploy --plan dev.plan\n") {
		t.Errorf("plan --out should name the target and the command that applies it: %s", r)
	}
	r = p.mustRun(0, "show", "dev.plan")
	if !strings.Contains(r.stderr, "Saved plan of shop/dev, bound to state serial 0") || !strings.Contains(r.stdout, "+ net (Command) create") {
		t.Errorf("show should print the saved plan: %s", r)
	}
	r = p.mustRun(2, "deploy", "-e", "prod", "--plan", "dev.plan")
	if !strings.Contains(r.stderr, "dev.plan is a plan for shop/dev, not shop/prod") || strings.Contains(r.stderr, "stale") {
		t.Errorf("a plan of another environment should be named as such, not stale: %s", r)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".deployer", "stacks", "shop", "prod")); err == nil {
		t.Errorf("a refused plan should leave prod untouched")
	}
	// No -e, no --yes, no terminal: the file is the target and the approval.
	r = p.mustRun(0, "deploy", "--plan", "dev.plan")
	if st := p.state("shop", "dev"); st.Serial != 1 {
		t.Fatalf("deploy --plan should write serial 1, got %d: %s", st.Serial, r)
	}
	r = p.mustRun(0, "show", "dev.plan", "--json")
	if !strings.Contains(r.stdout, `"environment": "dev"`) && !strings.Contains(r.stdout, `"environment":"dev"`) {
		t.Errorf("show --json should print the plan document: %s", r)
	}
}

func TestSecretsAreMaskedInEveryPlanOutput(t *testing.T) {
	p := newProject(t, `stack: shop
environments: {dev: {}}
services:
  app:
    components:
      db:
        kind: Command
        config: {user: admin, password: hunter2, token: {secret: true, value: s3cr3t-value}}
        command: {create: "true"}
`)
	for _, args := range [][]string{{"plan", "-e", "dev"}, {"plan", "-e", "dev", "--json"}} {
		r := p.mustRun(0, args...)
		if strings.Contains(r.stdout+r.stderr, "hunter2") || strings.Contains(r.stdout+r.stderr, "s3cr3t-value") {
			t.Errorf("%v printed a secret:\n%s", args, r)
		}
		if !strings.Contains(r.stdout, "admin") {
			t.Errorf("%v should still show non-secret values:\n%s", args, r)
		}
	}
}

func TestPulumiStackWithoutCLIFailsBeforeLockOrState(t *testing.T) {
	src, err := os.ReadFile("../../examples/user-platform/deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := newProject(t, string(src))
	r := p.mustRun(0, "plan", "-e", "production") // planning needs no engine
	if !strings.Contains(r.stdout, "+ database (RDS)") {
		t.Errorf("plan of user-platform:\n%s", r)
	}
	os.RemoveAll(filepath.Join(p.dir, ".deployer"))
	// A PATH with nothing on it: no Pulumi CLI, wherever the machine has one.
	p.env = []string{"PATH=" + t.TempDir()}
	r = p.mustRun(1, "deploy", "-e", "production", "--yes")
	for _, want := range []string{"Pulumi CLI", "--install-pulumi", "pulumi.command"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("missing-CLI error lacks %q: %s", want, r)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".deployer")); !os.IsNotExist(err) {
		t.Errorf("deploy without the Pulumi CLI touched .deployer (err=%v)", err)
	}
}

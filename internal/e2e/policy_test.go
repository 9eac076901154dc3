package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// policyYAML is a production stack checked against examples/policy/: a
// Command component whose create is %CREATE%.
const policyYAML = `stack: shop
%BACKEND%
policy: {paths: [policy/]}
environments: {production: {}}
services:
  tools:
    components:
      setup:
        kind: Command
        command: {create: "%CREATE%"}
`

// copyExamplePolicies copies examples/policy/ into the project's policy/,
// but the policies named in skip (their files and tests). The freeze is
// left out where a test's verdict must not depend on the day it runs
// (TestPolicyFreezeExample checks it at chosen times).
func copyExamplePolicies(t *testing.T, p *project, skip ...string) {
	t.Helper()
	files, err := filepath.Glob("../../examples/policy/*.rego")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples/policy: %v", err)
	}
	for _, f := range files {
		if slices.Contains(skip, strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".rego"), "_test")) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p.write(filepath.Join("policy", filepath.Base(f)), string(b))
	}
}

// stored is what a deny must leave as it was: the state, the history and
// the locks as deployer reads them back.
func (p *project) stored() string {
	var b strings.Builder
	for _, args := range [][]string{{"state", "show", "-e", "production", "--json"}, {"history", "-e", "production", "--json"}, {"state", "locks", "--json"}} {
		r := p.run(args...)
		b.WriteString(r.stdout + r.stderr)
	}
	return b.String()
}

func TestPolicyDeniesADownloadPipedIntoAShellAndAllowsTheCheckedOne(t *testing.T) {
	projectOnBackends(t, strings.Replace(policyYAML, "%CREATE%", "curl --version | sh -c true", 1), func(t *testing.T, p *project, yaml string, _ []string) {
		copyExamplePolicies(t, p, "freeze")
		before := p.stored()

		r := p.mustRun(0, "plan", "-e", "production")
		if !strings.Contains(r.stdout, "Policy: 3 policies (sha256:") || !strings.Contains(r.stdout, "x command_download_shell: deny") {
			t.Fatalf("plan shows no Policy section:\n%s", r)
		}
		p.mustRun(5, "plan", "-e", "production", "--detailed-exitcode")
		r = p.mustRun(5, "deploy", "-e", "production", "--yes")
		if !strings.Contains(r.stderr, "denied by policy: command_download_shell: tools/setup: command.create pipes a download into a shell") {
			t.Fatalf("deploy: %s", r)
		}
		if after := p.stored(); after != before {
			t.Fatalf("a denied deploy changed what is stored:\nbefore %s\nafter %s", before, after)
		}

		r = p.mustRun(0, "deploy", "-e", "production", "--yes", "--override-policy", "command_download_shell", "--reason", "vendor installer", "--audit-log", "audit.jsonl")
		if !strings.Contains(r.stdout, " (not verified): vendor installer\n") {
			t.Errorf("a local override is not shown as not verified:\n%s", r)
		}
		// Outside CI (the policy says allow_local_override: true) the local
		// user is recorded, not verified.
		if st := p.run("state", "show", "-e", "production", "--json"); !strings.Contains(st.stdout, `"policy_overrides"`) || !strings.Contains(st.stdout, `"reason": "vendor installer"`) ||
			!strings.Contains(st.stdout, `"verified": false`) || !strings.Contains(st.stdout, `"by_source": "the user running deployer (USER@hostname)"`) {
			t.Errorf("the deployment record has no override:\n%s", st)
		}
		if a := string(p.read("audit.jsonl")); !strings.Contains(a, `"event":"policy.overridden"`) || !strings.Contains(a, `"policy":"command_download_shell"`) || !strings.Contains(a, `"verified":false`) {
			t.Errorf("audit log: %s", a)
		}

		p.write("deployer.yaml", strings.Replace(yaml, "curl --version | sh -c true", "true", 1))
		r = p.mustRun(0, "deploy", "-e", "production", "--yes")
		if !strings.Contains(r.stdout, "+ pass: command_download_shell, rds_no_replace, rds_protection") {
			t.Errorf("the good plan is not allowed with all four passing:\n%s", r)
		}
	})
}

func TestPolicyNotOverridableAndSavedPlanBinding(t *testing.T) {
	projectOnBackends(t, strings.Replace(policyYAML, "%CREATE%", "true", 1), func(t *testing.T, p *project, yaml string, _ []string) {
		copyExamplePolicies(t, p, "freeze")
		p.write("deployer.yaml", yaml+`  data:
    components:
      db:
        kind: RDS
        config: {instance: {class: db.t4g.micro, storage: {encrypted: true}}}
`)
		before := p.stored()
		r := p.mustRun(5, "plan", "-e", "production", "--detailed-exitcode")
		if !strings.Contains(r.stdout, "x rds_protection: deny (not overridable)") || !strings.Contains(r.stdout, "data/db: RDS in production needs deletion.protection: true") {
			t.Fatalf("plan: %s", r)
		}
		// deploy needs the Pulumi CLI for RDS: the refused override is shown
		// on a policy of the same metadata over the Command component.
		p.write("deployer.yaml", yaml)
		p.write("policy/strict.rego", "# METADATA\n# custom:\n#   overridable: false\npackage deployer.strict\n\ndeny contains \"no Command in production\" if {\n\tsome s in input.steps\n\ts.kind == \"Command\"\n}\n")
		r = p.mustRun(5, "deploy", "-e", "production", "--yes", "--override-policy", "strict", "--reason", "please")
		if !strings.Contains(r.stderr, "policy strict is not overridable") {
			t.Fatalf("deploy: %s", r)
		}
		if after := p.stored(); after != before {
			t.Fatalf("a refused override changed what is stored")
		}
		// A policy overridable from GitHub Actions alone is refused outside CI.
		p.write("policy/strict.rego", "# METADATA\n# custom:\n#   overridable_by: [octocat]\npackage deployer.strict\n\ndeny contains \"no Command in production\" if {\n\tsome s in input.steps\n\ts.kind == \"Command\"\n}\n")
		r = p.mustRun(5, "deploy", "-e", "production", "--yes", "--override-policy", "strict", "--reason", "please", "--audit-log", "audit.jsonl")
		if !strings.Contains(r.stderr, "policy strict may not be overridden by") || !strings.Contains(r.stderr, "not verified") ||
			!strings.Contains(r.stderr, "run the deploy from GitHub Actions as one of overridable_by: octocat") || !strings.Contains(r.stderr, "allow_local_override: true") {
			t.Fatalf("a local override of a policy without allow_local_override: %s", r)
		}
		if after := p.stored(); after != before {
			t.Fatalf("a refused override changed what is stored")
		}
		os.Remove(filepath.Join(p.dir, "policy/strict.rego"))

		// A saved plan binds the policies' digest: changed policies refuse it.
		p.mustRun(0, "plan", "-e", "production", "--out", "prod.plan")
		p.write("policy/extra.rego", "package deployer.extra\n\nwarn contains \"new policy\" if true\n")
		r = p.mustRun(4, "deploy", "-e", "production", "--yes", "--plan", "prod.plan")
		if !strings.Contains(r.stderr, "saved plan is stale: policies: planned sha256:") {
			t.Fatalf("deploy --plan after a policy change: %s", r)
		}
		os.Remove(filepath.Join(p.dir, "policy/extra.rego"))
		p.mustRun(0, "deploy", "-e", "production", "--yes", "--plan", "prod.plan")
	})
}

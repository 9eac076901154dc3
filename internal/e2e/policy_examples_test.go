package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// The example policies of examples/policy/, each shown to deny the bad plan
// and allow the good one through the built binary, on the file backends and
// on S3 with DynamoDB locks. RDS is planned, never applied (that needs AWS):
// a denied deploy stops before any engine runs, so it needs no Pulumi CLI.

// rdsConfig is the config of data/db, an RDS instance.
const rdsConfig = `{instance: {class: db.t4g.micro, storage: {encrypted: true}}, deletion: {protection: true}, identifier: shop-db}`

// withRDS is policyYAML's stack (a Command component whose create is
// "true") with data/db of config cfg.
func withRDS(yaml, cfg string) string {
	return strings.Replace(yaml, "%CREATE%", "true", 1) + "  data:\n    components:\n      db:\n        kind: RDS\n        config: " + cfg + "\n"
}

// seedRDS writes data/db into the stored state as an RDS instance of
// desired config cfg, as a deploy of it would have (with state push: the
// next serial).
func seedRDS(t *testing.T, p *project, cfg map[string]any) {
	t.Helper()
	r := p.mustRun(0, "state", "show", "-e", "production", "--json")
	var st statestore.State
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("state show --json: %v", err)
	}
	db := *st.Resources["tools/setup"]
	db.Kind, db.DesiredConfig, db.ActualState, db.Outputs = "RDS", cfg, map[string]any{"status": "available"}, map[string]any{"port": "5432"}
	st.Resources["data/db"] = &db
	st.Serial++ // written from the stored serial
	b, err := statestore.Encode(&st)
	if err != nil {
		t.Fatal(err)
	}
	p.write("seeded.json", string(b))
	p.mustRun(0, "state", "push", "seeded.json", "-e", "production", "--yes", "--force") // a seeded file names no stored state it came from
}

func TestPolicyRDSExamplesDenyTheBadPlanAndAllowTheGoodOne(t *testing.T) {
	projectOnBackends(t, policyYAML, func(t *testing.T, p *project, yaml string, _ []string) {
		copyExamplePolicies(t, p, "freeze")

		// rds_protection: production RDS needs deletion protection and
		// encrypted storage, and no override goes past it.
		p.write("deployer.yaml", withRDS(yaml, `{instance: {class: db.t4g.micro, storage: {encrypted: false}}, identifier: shop-db}`))
		before := p.stored()
		r := p.mustRun(5, "plan", "-e", "production", "--detailed-exitcode")
		for _, want := range []string{"x rds_protection: deny (not overridable)", "data/db: RDS in production needs deletion.protection: true",
			"data/db: RDS in production needs instance.storage.encrypted: true", "+ pass: command_download_shell, rds_no_replace"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("plan lacks %q:\n%s", want, r)
			}
		}
		r = p.mustRun(5, "deploy", "-e", "production", "--yes")
		if !strings.Contains(r.stderr, "denied by policy: rds_protection: data/db: RDS in production needs deletion.protection: true") {
			t.Errorf("deploy: %s", r)
		}
		r = p.mustRun(5, "deploy", "-e", "production", "--yes", "--override-policy", "rds_protection", "--reason", "just this once")
		if !strings.Contains(r.stderr, "policy rds_protection is not overridable") {
			t.Errorf("deploy --override-policy rds_protection: %s", r)
		}
		if after := p.stored(); after != before {
			t.Fatalf("a denied deploy changed what is stored:\nbefore %s\nafter %s", before, after)
		}
		p.write("deployer.yaml", withRDS(yaml, rdsConfig))
		r = p.mustRun(2, "plan", "-e", "production", "--detailed-exitcode")
		if !strings.Contains(r.stdout, "+ db (RDS) create") || !strings.Contains(r.stdout, "+ pass: command_download_shell, rds_no_replace, rds_protection") {
			t.Errorf("a protected, encrypted RDS should pass every policy:\n%s", r)
		}

		// rds_no_replace: with data/db in the state, a replace (a new
		// identifier) and a delete are denied, an update is allowed.
		p.write("deployer.yaml", strings.Replace(yaml, "%CREATE%", "true", 1))
		p.mustRun(0, "deploy", "-e", "production", "--yes")
		seedRDS(t, p, map[string]any{"instance": map[string]any{"class": "db.t4g.micro", "storage": map[string]any{"encrypted": true}},
			"deletion": map[string]any{"protection": true}, "identifier": "shop-db"})
		p.write("deployer.yaml", withRDS(yaml, rdsConfig))
		p.mustRun(0, "plan", "-e", "production", "--detailed-exitcode")
		before = p.stored()
		for _, bad := range []struct{ yaml, action string }{
			{withRDS(yaml, strings.Replace(rdsConfig, "shop-db", "shop-db-2", 1)), "replace"},
			{strings.Replace(yaml, "%CREATE%", "true", 1), "delete"},
		} {
			p.write("deployer.yaml", bad.yaml)
			msg := fmt.Sprintf("data/db: %s of an RDS instance in production (its data goes with it)", bad.action)
			r = p.mustRun(5, "plan", "-e", "production", "--detailed-exitcode")
			if !strings.Contains(r.stdout, "x rds_no_replace: deny\n") || !strings.Contains(r.stdout, msg) {
				t.Errorf("a %s of RDS: plan:\n%s", bad.action, r)
			}
			r = p.mustRun(5, "deploy", "-e", "production", "--yes")
			if !strings.Contains(r.stderr, "denied by policy: rds_no_replace: "+msg) {
				t.Errorf("a %s of RDS: deploy:\n%s", bad.action, r)
			}
		}
		if after := p.stored(); after != before {
			t.Fatalf("a denied deploy changed what is stored:\nbefore %s\nafter %s", before, after)
		}
		p.write("deployer.yaml", withRDS(yaml, strings.Replace(rdsConfig, "db.t4g.micro", "db.r6g.large", 1)))
		r = p.mustRun(2, "plan", "-e", "production", "--detailed-exitcode")
		if !strings.Contains(r.stdout, "~ db (RDS) update") || !strings.Contains(r.stdout, "+ pass: command_download_shell, rds_no_replace, rds_protection") {
			t.Errorf("an update of RDS should be allowed:\n%s", r)
		}
	})
}

// freezeAt is examples/policy/freeze.rego evaluated at a chosen time: the
// example's package is renamed out of the policies' namespace, and the
// policy freeze evaluates its rules with input.deployment.time as at.
func freezeAt(t *testing.T, p *project, at string) {
	t.Helper()
	b, err := os.ReadFile("../../examples/policy/freeze.rego")
	if err != nil {
		t.Fatal(err)
	}
	p.write("policy/freeze.rego", strings.Replace(string(b), "package deployer.freeze\n", "package example.freeze\n", 1))
	// The wrapper is the policy: it carries the example's METADATA (who
	// may override it).
	header, _, _ := strings.Cut(string(b), "package deployer.freeze\n")
	p.write("policy/freeze_at.rego", header+fmt.Sprintf(`package deployer.freeze

import data.example.freeze

deny contains msg if some msg in freeze.deny with input.deployment.time as %[1]q

warn contains msg if some msg in freeze.warn with input.deployment.time as %[1]q
`, at))
}

// frozen is the example's window: Friday 16:00 to Monday 06:00 UTC.
func frozen(at time.Time) bool {
	at = at.UTC()
	switch at.Weekday() {
	case time.Friday:
		return at.Hour() >= 16
	case time.Saturday, time.Sunday:
		return true
	case time.Monday:
		return at.Hour() < 6
	}
	return false
}

func TestPolicyFreezeExample(t *testing.T) {
	projectOnBackends(t, strings.Replace(policyYAML, "%CREATE%", "true", 1), func(t *testing.T, p *project, yaml string, _ []string) {
		lib, err := os.ReadFile("../../examples/policy/lib.rego")
		if err != nil {
			t.Fatal(err)
		}
		p.write("policy/lib.rego", string(lib))

		// Friday evening: a production change is denied, and overridable.
		freezeAt(t, p, "2026-11-27T17:00:00Z")
		before := p.stored()
		r := p.mustRun(5, "plan", "-e", "production", "--detailed-exitcode")
		const msg = "production is frozen from Friday 16:00 to Monday 06:00 UTC (now 2026-11-27T17:00:00Z)"
		if !strings.Contains(r.stdout, "x freeze: deny\n      "+msg+"\n") {
			t.Errorf("Friday 17:00: plan:\n%s", r)
		}
		r = p.mustRun(5, "deploy", "-e", "production", "--yes")
		if !strings.Contains(r.stderr, "denied by policy: freeze: "+msg) {
			t.Errorf("Friday 17:00: deploy:\n%s", r)
		}
		if after := p.stored(); after != before {
			t.Fatalf("a denied deploy changed what is stored:\nbefore %s\nafter %s", before, after)
		}
		// Friday noon: allowed, with a warning. Thursday: allowed.
		freezeAt(t, p, "2026-11-27T12:00:00Z")
		r = p.mustRun(2, "plan", "-e", "production", "--detailed-exitcode")
		if !strings.Contains(r.stdout, "! freeze: warn\n      warn: a Friday deploy to production: the freeze starts at 16:00 UTC\n") {
			t.Errorf("Friday 12:00: plan:\n%s", r)
		}
		freezeAt(t, p, "2026-11-26T12:00:00Z")
		r = p.mustRun(0, "deploy", "-e", "production", "--yes")
		if !strings.Contains(r.stdout, "+ pass: freeze") {
			t.Errorf("Thursday: deploy:\n%s", r)
		}
		// Monday 05:59 is still frozen for a change; no change is never frozen.
		freezeAt(t, p, "2026-11-30T05:59:00Z")
		p.mustRun(0, "plan", "-e", "production", "--detailed-exitcode")
		p.write("deployer.yaml", strings.Replace(yaml, `create: "true"`, `create: "true", delete: "true"`, 1))
		p.mustRun(5, "plan", "-e", "production", "--detailed-exitcode")

		// The example as shipped reads the deployment's own time.
		b, err := os.ReadFile("../../examples/policy/freeze.rego")
		if err != nil {
			t.Fatal(err)
		}
		p.write("policy/freeze.rego", string(b))
		if err := os.Remove(p.dir + "/policy/freeze_at.rego"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		r = p.run("plan", "-e", "production", "--detailed-exitcode")
		if f := frozen(start); f == frozen(time.Now()) {
			if want := map[bool]int{true: 5, false: 2}[f]; r.code != want {
				t.Errorf("the shipped freeze at %s (frozen: %v): want exit %d, got %s", start.UTC().Format(time.RFC3339), f, want, r)
			}
		}
	})
}

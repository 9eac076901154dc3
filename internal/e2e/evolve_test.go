//go:build unix

package e2e

// Changing the infrastructure without losing it (docs/operations.md):
// targets, protect, destroying what others need, moves, forgetting, stack
// outputs. Each test runs on the file backends and on S3 state with
// DynamoDB locks.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const targetsYAML = `stack: targets
%BACKEND%environments: {dev: {}}
services:
  app:
    components:
      api: {kind: Command, config: {v: "1"}, command: {create: echo create-api >> ran.log, update: echo update-api >> ran.log, delete: echo delete-api >> ran.log}}
      worker: {kind: Command, config: {v: "1"}, command: {create: echo create-worker >> ran.log, update: echo update-worker >> ran.log, delete: echo delete-worker >> ran.log}}
  edge:
    components:
      cdn: {kind: Command, config: {v: "1"}, command: {create: echo create-cdn >> ran.log, update: echo update-cdn >> ran.log, delete: echo delete-cdn >> ran.log}}
  data:
    components:
      db: {kind: Command, config: {v: "1"}, command: {create: echo create-db >> ran.log, update: echo update-db >> ran.log, delete: echo delete-db >> ran.log}}
`

// changedSteps returns the addresses of the plan's steps that are not no-ops, sorted.
func changedSteps(p planJSON) []string {
	var out []string
	for _, s := range p.Steps {
		if s.Action != "no-op" {
			out = append(out, s.Address)
		}
	}
	slices.Sort(out)
	return out
}

func stepAddresses(p planJSON) []string {
	var out []string
	for _, s := range p.Steps {
		out = append(out, s.Address)
	}
	slices.Sort(out)
	return out
}

// TestTargetsAreRepeatableAndExcludable: --component repeats and takes a
// comma list, --exclude leaves components out, in plan, deploy and
// destroy; a saved plan binds its targets.
func TestTargetsAreRepeatableAndExcludable(t *testing.T) {
	projectOnBackends(t, targetsYAML, func(t *testing.T, p *project, yaml string, env []string) {
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		p.write("deployer.yaml", strings.ReplaceAll(yaml, `v: "1"`, `v: "2"`))
		p.write("ran.log", "")

		for _, args := range [][]string{
			{"--component", "app/api", "--component", "edge/cdn"},
			{"--component", "app/api,edge/cdn"},
		} {
			pj := parsePlan(t, p.mustRun(0, append([]string{"plan", "-e", "dev", "--json"}, args...)...))
			if got := stepAddresses(pj); !slices.Equal(got, []string{"app/api", "edge/cdn"}) {
				t.Errorf("plan %v: steps %v, want app/api and edge/cdn", args, got)
			}
		}
		pj := parsePlan(t, p.mustRun(0, "plan", "-e", "dev", "--json", "--exclude", "data/db", "--exclude", "app/worker"))
		if got := changedSteps(pj); !slices.Equal(got, []string{"app/api", "edge/cdn"}) {
			t.Errorf("plan --exclude data/db --exclude app/worker: changes %v", got)
		}
		r := p.mustRun(2, "plan", "-e", "dev", "--component", "app/api", "--component", "nope/x")
		if !strings.Contains(r.stderr, "component nope/x is not in deployer.yaml") {
			t.Errorf("an unknown --component should be named:\n%s", r)
		}
		r = p.mustRun(2, "plan", "-e", "dev", "--exclude", "dta")
		if !strings.Contains(r.stderr, `service "dta" is not in deployer.yaml (did you mean "data"?)`) {
			t.Errorf("an unknown --exclude should be named:\n%s", r)
		}

		r = p.mustRun(0, "deploy", "-e", "dev", "--yes", "--component", "app/api", "--component", "edge/cdn")
		if log := string(p.read("ran.log")); log != "update-api\nupdate-cdn\n" && log != "update-cdn\nupdate-api\n" {
			t.Errorf("deploy of two components should update both and nothing else; ran.log:\n%s\n%s", log, r)
		}
		pj = parsePlan(t, p.mustRun(0, "plan", "-e", "dev", "--json"))
		if got := changedSteps(pj); !slices.Equal(got, []string{"app/worker", "data/db"}) {
			t.Errorf("after the targeted deploy, the plan should change only the others: %v", got)
		}

		// A saved plan binds its targets: deploy --plan applies its scope,
		// and refuses another.
		p.mustRun(0, "plan", "-e", "dev", "--exclude", "data", "--out", "p.plan")
		r = p.mustRun(2, "deploy", "-e", "dev", "--plan", "p.plan", "--yes", "--component", "data/db")
		if !strings.Contains(r.stderr, "--component cannot be used with --plan") {
			t.Errorf("deploy --plan with target flags should be a flag conflict:\n%s", r)
		}
		p.write("ran.log", "")
		r = p.mustRun(0, "deploy", "-e", "dev", "--plan", "p.plan", "--yes")
		if log := string(p.read("ran.log")); log != "update-worker\n" {
			t.Errorf("deploy --plan of a plan excluding data should update app/worker only; ran.log:\n%s\n%s", log, r)
		}

		p.write("ran.log", "")
		p.mustRun(0, "destroy", "-e", "dev", "--yes", "--component", "app/api,app/worker")
		if log := string(p.read("ran.log")); !strings.Contains(log, "delete-api") || !strings.Contains(log, "delete-worker") || strings.Contains(log, "delete-cdn") || strings.Contains(log, "delete-db") {
			t.Errorf("destroy --component app/api,app/worker should delete those two only; ran.log:\n%s", log)
		}
		st := p.remoteState("dev")
		if _, ok := st.Resources["app/api"]; ok {
			t.Errorf("app/api should be gone from the state")
		}
		if _, ok := st.Resources["data/db"]; !ok {
			t.Errorf("data/db should still be in the state")
		}
	})
}

// TestAScopedPlanRefusesAnUndeployedDependency: a --component plan of a
// component whose dependency outside the target was never deployed is
// refused, naming both, instead of running it with that dependency's
// inputs empty; once the dependency is deployed the same target applies.
func TestAScopedPlanRefusesAnUndeployedDependency(t *testing.T) {
	p := newProject(t, `stack: undeployed
environments: {dev: {}}
services:
  data:
    components:
      db: {kind: Command, config: {v: "1"}, command: {create: 'echo "{\"url\": \"db://x\"}" > "$DEPLOYER_OUTPUTS"'}}
  app:
    components:
      api: {kind: Command, config: {v: "1"}, depends_on: [data/db], command: {create: 'echo "got=$DEPLOYER_DEP_DATA_DB_URL" >> ran.log'}}
`)
	for _, args := range [][]string{
		{"plan", "-e", "dev", "--component", "app/api"},
		{"deploy", "-e", "dev", "--yes", "--service", "app"},
		{"deploy", "-e", "dev", "--yes", "--exclude", "data"},
	} {
		r := p.mustRun(2, args...)
		if !strings.Contains(r.stderr, "app/api depends on data/db, outside the target and not deployed yet") || !strings.Contains(r.stderr, "--component data/db") {
			t.Errorf("%v should be refused naming the undeployed dependency and the fix:\n%s", args, r)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, "ran.log")); err == nil {
		t.Fatalf("a refused scoped deploy ran app/api:\n%s", p.read("ran.log"))
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes", "--component", "data/db")
	p.mustRun(0, "deploy", "-e", "dev", "--yes", "--component", "app/api")
	if log := string(p.read("ran.log")); log != "got=db://x\n" {
		t.Errorf("app/api, deployed after its dependency, should read its output; ran.log:\n%s", log)
	}
}

//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// chainYAML is data/db and a chain of ten components, each depending on
// the one before (app/c1 on data/db). Every command appends to ran.log.
func chainYAML(dbName string, moved string) string {
	var b strings.Builder
	b.WriteString("stack: moves\n%BACKEND%environments: {dev: {}}\n")
	b.WriteString(moved)
	cmd := func(name string) string {
		return fmt.Sprintf(`{create: 'echo create-%[1]s >> ran.log; printf "{\"url\":\"%[1]s-1\"}" > "$DEPLOYER_OUTPUTS"', update: echo update-%[1]s >> ran.log, delete: echo delete-%[1]s >> ran.log}`, name)
	}
	fmt.Fprintf(&b, "services:\n  data:\n    components:\n      %s: {kind: Command, config: {size: 1}, command: %s}\n", dbName, cmd("db"))
	b.WriteString("  app:\n    components:\n")
	for i := 1; i <= 10; i++ {
		dep := "data/" + dbName
		if i > 1 {
			dep = fmt.Sprintf("c%d", i-1)
		}
		fmt.Fprintf(&b, "      c%d: {kind: Command, depends_on: [%s], command: %s}\n", i, dep, cmd(fmt.Sprintf("c%d", i)))
	}
	return b.String()
}

// rawResources are the state's resources as state show --json prints them.
func rawResources(t *testing.T, p *project) map[string]json.RawMessage {
	t.Helper()
	r := p.mustRun(0, "state", "show", "-e", "dev", "--json")
	var st struct {
		Resources map[string]json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("state show --json: %v\n%s", err, r)
	}
	return st.Resources
}

// TestMovedRenamesWithoutDeleting: renaming data/db to data/database with
// a moved: entry, with ten components depending on it in a chain, plans
// one move and no create or delete, runs no command, keeps the state
// entry byte for byte, and history shows the move. state mv does a
// one-off move; a destination already in the state is refused. A whole
// service moves the same way.
func TestMovedRenamesWithoutDeleting(t *testing.T) {
	projectOnBackends(t, chainYAML("db", ""), func(t *testing.T, p *project, yaml string, env []string) {
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		before := rawResources(t, p)

		backend := yaml[strings.Index(yaml, "backend:"):strings.Index(yaml, "environments:")]
		renamed := strings.Replace(chainYAML("database", "moved:\n  - {from: data/db, to: data/database}\n"), "%BACKEND%", backend, 1)
		p.write("deployer.yaml", renamed)
		p.write("ran.log", "")

		pj := parsePlan(t, p.mustRun(0, "plan", "-e", "dev", "--json"))
		var moved []string
		for _, s := range pj.Steps {
			if s.Action != "no-op" {
				t.Errorf("step %s is %s, want no-op", s.Address, s.Action)
			}
			if s.MovedFrom != "" {
				moved = append(moved, s.MovedFrom+" -> "+s.Address)
			}
		}
		if len(moved) != 1 || moved[0] != "data/db -> data/database" || len(pj.Steps) != 11 {
			t.Errorf("plan should move data/db to data/database and nothing else: moved %v, %d steps", moved, len(pj.Steps))
		}
		// A scoped plan of a dependent of the moved component is refused:
		// the unmoved state has no data/database for its inputs.
		if r := p.mustRun(2, "plan", "-e", "dev", "--component", "app/c1"); !strings.Contains(r.stderr, "moved: data/db -> data/database is not applied yet") {
			t.Errorf("a scoped plan of data/database's dependent should be refused until the move is deployed:\n%s", r)
		}
		r := p.mustRun(0, "plan", "-e", "dev")
		if !strings.Contains(r.stdout, "data/db -> data/database (moved)") || !strings.Contains(r.stdout, "0 to create, 0 to update, 0 to replace, 0 to delete, 1 to move, 10 unchanged") {
			t.Errorf("plan should show the move:\n%s", r)
		}

		r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); log != "" {
			t.Errorf("a move should run no command; ran.log:\n%s\n%s", log, r)
		}
		after := rawResources(t, p)
		if _, ok := after["data/db"]; ok {
			t.Errorf("data/db should be gone from the state")
		}
		if string(after["data/database"]) != string(before["data/db"]) {
			t.Errorf("the moved entry should be kept as it was:\nbefore %s\nafter  %s", before["data/db"], after["data/database"])
		}
		if c1 := string(after["app/c1"]); !strings.Contains(c1, `"data/database"`) || strings.Contains(c1, `"data/db"`) {
			t.Errorf("app/c1's dependencies and recorded inputs should follow the move: %s", c1)
		}
		if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes") {
			t.Errorf("after the move the plan should be empty:\n%s", r)
		}
		if r := p.mustRun(0, "history", "-e", "dev"); !strings.Contains(r.stdout, "moved data/db -> data/database") {
			t.Errorf("history should show the move:\n%s", r)
		}

		// A whole service: moved: {from: app, to: chain} moves its ten
		// components, running nothing; state mv of a service moves them back.
		p.write("deployer.yaml", strings.Replace(strings.Replace(renamed, "  app:\n", "  chain:\n", 1), "moved:\n", "moved:\n  - {from: app, to: chain}\n", 1))
		r = p.mustRun(0, "plan", "-e", "dev")
		if !strings.Contains(r.stdout, "app/c10 -> chain/c10 (moved)") || !strings.Contains(r.stdout, "0 to create, 0 to update, 0 to replace, 0 to delete, 10 to move, 1 unchanged") {
			t.Errorf("plan should move the service's ten components:\n%s", r)
		}
		r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); log != "" || len(rawResources(t, p)) != 11 {
			t.Errorf("a service move should run no command; ran.log:\n%s\n%s", log, r)
		}
		p.write("deployer.yaml", renamed)
		if r := p.mustRun(0, "state", "mv", "-e", "dev", "chain", "app"); strings.Count(r.stdout, "(moved)") != 10 {
			t.Errorf("state mv chain app should move ten components:\n%s", r)
		}
		if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes") {
			t.Errorf("after moving the service back the plan should be empty:\n%s", r)
		}

		// state mv: rename app/c10 in the file without moved:, move its entry by hand.
		p.write("deployer.yaml", strings.Replace(renamed, "      c10:", "      last:", 1))
		r = p.mustRun(0, "state", "mv", "-e", "dev", "app/c10", "app/last")
		if !strings.Contains(r.stdout, "app/c10 -> app/last (moved)") {
			t.Errorf("state mv should say what moved:\n%s", r)
		}
		if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes") {
			t.Errorf("after state mv the plan should be empty:\n%s", r)
		}
		if r := p.mustRun(0, "history", "-e", "dev"); !strings.Contains(r.stdout, "state-mv") || !strings.Contains(r.stdout, "moved app/c10 -> app/last") {
			t.Errorf("history should show the state-mv:\n%s", r)
		}
		r = p.mustRun(1, "state", "mv", "-e", "dev", "app/c1", "app/c2")
		if !strings.Contains(r.stderr, "app/c2 is already in the state") {
			t.Errorf("state mv onto a taken address should be refused:\n%s", r)
		}
		// A moved: entry whose from is not in the state is a no-op; one
		// whose to is taken is refused.
		p.write("deployer.yaml", strings.Replace(strings.Replace(renamed, "      c10:", "      last:", 1), "moved:\n", "moved:\n  - {from: app/gone, to: app/c9}\n", 1))
		if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes") {
			t.Errorf("a move from an address not in the state should change nothing:\n%s", r)
		}
		p.mustRun(0, "state", "mv", "-e", "dev", "app/c9", "app/old9")
		p.mustRun(0, "state", "mv", "-e", "dev", "app/c8", "app/c9")
		p.write("deployer.yaml", strings.Replace(strings.Replace(renamed, "      c10:", "      last:", 1), "moved:\n", "moved:\n  - {from: app/old9, to: app/c9}\n", 1))
		r = p.mustRun(1, "plan", "-e", "dev")
		if !strings.Contains(r.stderr, "cannot move app/old9 to app/c9: app/c9 is already in the state") {
			t.Errorf("a move onto a taken address should be refused:\n%s", r)
		}
	})
}

// state mv to an address deployer.yaml does not declare still moves, and
// warns: the next deploy would delete the entry. A move to a declared
// address says nothing more.
func TestStateMoveToAnUndeclaredAddressWarns(t *testing.T) {
	p := newProject(t, strings.Replace(chainYAML("db", ""), "%BACKEND%", "backend: {state: file://.deployer, lock: file://.deployer}\n", 1))
	p.write("ran.log", "")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	r := p.mustRun(0, "state", "mv", "-e", "dev", "app/c10", "app/old10")
	if !strings.Contains(r.stdout, "app/c10 -> app/old10 (moved)") ||
		!strings.Contains(r.stderr, "Warning: app/old10 is not declared in deployer.yaml: the next deploy deletes it") {
		t.Errorf("state mv to an undeclared address should move and warn:\n%s", r)
	}
	if _, ok := rawResources(t, p)["app/old10"]; !ok {
		t.Errorf("the entry did not move")
	}
	r = p.mustRun(0, "state", "mv", "-e", "dev", "app/old10", "app/c10")
	if strings.Contains(r.stderr, "not declared") {
		t.Errorf("a move to a declared address warns:\n%s", r)
	}
}

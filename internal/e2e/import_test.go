//go:build unix

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// importYAML is data/db adopted by id (import:, its read printing the
// instance the id names) and app/api, created, reading its url. Every
// command appends to ran.log.
const importYAML = `stack: imports
%BACKEND%environments: {dev: {}}
services:
  data:
    components:
      db:
        kind: Command
        config: {size: 1}
        import: {id: db-42}
        command:
          create: echo create-db >> ran.log
          read: 'echo "read-db $DEPLOYER_ACTION $DEPLOYER_IMPORT_ID" >> ran.log; printf "{\"id\":\"%s\",\"url\":\"pg://%s\"}" "$DEPLOYER_IMPORT_ID" "$DEPLOYER_IMPORT_ID"'
  app:
    components:
      api:
        kind: Command
        depends_on: [data/db]
        command: {create: 'echo "create-api $DEPLOYER_DEP_DATA_DB_URL" >> ran.log'}
`

// importCache is data/cache, added to importYAML for deployer import.
const importCache = `      cache:
        kind: Command
        command:
          create: echo create-cache >> ran.log
          read: 'echo "read-cache $DEPLOYER_ACTION $DEPLOYER_IMPORT_ID" >> ran.log; printf "{\"host\":\"%s.cache\"}" "$DEPLOYER_IMPORT_ID"'
`

// resource is one state entry as state show --json prints it.
func resource(t *testing.T, p *project, addr string) statestore.Resource {
	t.Helper()
	var r statestore.Resource
	if err := json.Unmarshal(rawResources(t, p)[addr], &r); err != nil {
		t.Fatalf("state entry %s: %v", addr, err)
	}
	return r
}

// TestImportAdoptsACommandComponent: a Command component with import:
// plans "= import", a saved plan binds the id, the deploy runs its read
// with DEPLOYER_IMPORT_ID and never its create, the state holds what the
// read printed as outputs, history shows the import and the next plan is
// empty; another id for it is refused. deployer import ADDR ID does the
// same for a component without import:, recorded as type import. A
// Command component without a read cannot be imported.
func TestImportAdoptsACommandComponent(t *testing.T) {
	projectOnBackends(t, importYAML, func(t *testing.T, p *project, yaml string, env []string) {
		p.write("ran.log", "")
		pj := parsePlan(t, p.mustRun(0, "plan", "-e", "dev", "--json", "--component", "data/db"))
		if len(pj.Steps) != 1 || pj.Steps[0].Action != "import" || pj.Steps[0].ImportID != "db-42" {
			t.Errorf("plan --json should import data/db with id db-42: %+v", pj.Steps)
		}
		r := p.mustRun(0, "plan", "-e", "dev", "--out", "import.plan")
		if !strings.Contains(r.stdout, `= db (Command) import (id "db-42")`) || !strings.Contains(r.stdout, "0 to delete, 1 to import,") {
			t.Errorf("plan should show = import:\n%s", r)
		}

		// The saved plan binds the id: another one is refused.
		p.write("deployer.yaml", strings.Replace(yaml, "{id: db-42}", "{id: db-41}", 1))
		r = p.mustRun(4, "deploy", "--plan", "import.plan")
		if !strings.Contains(r.stderr, "services.data.components.db.import.id") {
			t.Errorf("a saved plan of another import id should be refused naming it:\n%s", r)
		}
		p.write("deployer.yaml", yaml)
		r = p.mustRun(0, "deploy", "--plan", "import.plan")
		log := string(p.read("ran.log"))
		if !strings.Contains(log, "read-db import db-42") || strings.Contains(log, "create-db") || !strings.Contains(log, "create-api pg://db-42") {
			t.Errorf("deploy should run db's read with the id, not its create, and api should read its url; ran.log:\n%s\n%s", log, r)
		}
		if !strings.Contains(r.stdout, "1 imported") {
			t.Errorf("the deploy summary should count the import:\n%s", r)
		}
		db := resource(t, p, "data/db")
		if diff := cmp.Diff(map[string]any{"id": "db-42", "url": "pg://db-42"}, db.Outputs); diff != "" || db.Lifecycle.ImportedID != "db-42" {
			t.Errorf("the state should hold what read printed as outputs (-want +got):\n%s\nand the imported id: %+v", diff, db.Lifecycle)
		}
		if r := p.mustRun(0, "history", "-e", "dev"); !strings.Contains(r.stdout, "imported data/db (id db-42)") {
			t.Errorf("history should show the import:\n%s", r)
		}
		if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes") {
			t.Errorf("once imported, import: should change nothing:\n%s", r)
		}
		p.write("deployer.yaml", strings.Replace(yaml, "{id: db-42}", "{id: db-43}", 1))
		r = p.mustRun(1, "plan", "-e", "dev")
		if !strings.Contains(r.stderr, `data/db is already in the state (imported with id "db-42") and its import: names id "db-43"`) {
			t.Errorf("an import: of another id for an imported component should be refused:\n%s", r)
		}
		p.write("deployer.yaml", yaml)

		// deployer import ADDR ID: the same for data/cache, as type import.
		yaml = strings.Replace(yaml, "  app:\n", importCache+"  app:\n", 1)
		p.write("deployer.yaml", yaml)
		p.write("ran.log", "")
		r = p.mustRun(0, "import", "data/cache", "c-7", "-e", "dev", "--yes")
		log = string(p.read("ran.log"))
		if log != "read-cache import c-7\n" || !strings.Contains(r.stdout, `= cache (Command) import (id "c-7")`) {
			t.Errorf("deployer import should run the read with the id and nothing else; ran.log:\n%s\n%s", log, r)
		}
		if c := resource(t, p, "data/cache"); !cmp.Equal(c.Outputs, map[string]any{"host": "c-7.cache"}) {
			t.Errorf("the state should hold what cache's read printed: %v", c.Outputs)
		}
		r = p.mustRun(0, "history", "-e", "dev")
		if first := strings.SplitN(r.stdout, "\n", 3)[1]; !strings.Contains(first, " import ") || !strings.Contains(first, "imported data/cache (id c-7)") {
			t.Errorf("history should show deployer import as type import:\n%s", r)
		}
		if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes") {
			t.Errorf("after deployer import the plan should be empty:\n%s", r)
		}
		r = p.mustRun(1, "import", "data/cache", "c-8", "-e", "dev", "--yes")
		if !strings.Contains(r.stderr, "data/cache is already in the state") {
			t.Errorf("importing another id onto an imported component should be refused:\n%s", r)
		}

		// Without a read a Command component cannot be imported.
		p.write("deployer.yaml", strings.Replace(yaml, "          read: 'echo \"read-db", "          #read: 'echo \"read-db", 1))
		r = p.mustRun(1, "plan", "-e", "dev")
		if !strings.Contains(r.stderr, "services.data.components.db.import: kind Command needs command.read to import") {
			t.Errorf("import: without command.read should be a config error saying what to add:\n%s", r)
		}
		p.write("deployer.yaml", strings.Replace(yaml, "import: {id: db-42}", "", 1))
		r = p.mustRun(2, "import", "app/api", "a-1", "-e", "dev", "--yes")
		if !strings.Contains(r.stderr, "app/api: kind Command needs command.read to import") {
			t.Errorf("deployer import of a component without read should say what to add:\n%s", r)
		}
	})
}

// importFailYAML is data/db, whose read (run to import) exits 3 or prints
// something that is not JSON (%READ%), and data/ok, whose read works.
const importFailYAML = `stack: imports
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  data:
    components:
      db:
        kind: Command
        command:
          create: echo create-db >> ran.log
          read: '%READ%'
      ok:
        kind: Command
        command:
          create: echo create-ok >> ran.log
          read: 'printf "{\"id\":\"%s\"}" "$DEPLOYER_IMPORT_ID"'
`

// A failed import says what it was: no "import done" before the error,
// state show lists it as a failed import (not as a create the next deploy
// makes), and deployer import's errors speak of deployer import, not of an
// import: block the user never wrote.
func TestImportFailureAndWordingAreTruthful(t *testing.T) {
	p := newProject(t, strings.Replace(importFailYAML, "%READ%", "echo notjson", 1))
	r := p.mustRun(1, "import", "data/db", "x-1", "-e", "dev", "--yes")
	if strings.Contains(r.stderr, "import done") || !strings.Contains(r.stderr, `component data/db: import command "echo notjson" printed invalid JSON`) {
		t.Errorf("a failed import should not say done, and its error should say import:\n%s", r)
	}
	st := p.mustRun(0, "state", "show", "-e", "dev")
	if strings.Contains(st.stdout, "create") || !strings.Contains(st.stdout, "failed (import)") ||
		!strings.Contains(st.stdout, "Not imported (no state entry): data/db") {
		t.Errorf("state show should list the failed import as one:\n%s", st)
	}

	p.write("deployer.yaml", strings.Replace(importFailYAML, "%READ%", `echo "no $DEPLOYER_IMPORT_ID" >&2; exit 3`, 1))
	r = p.mustRun(1, "import", "data/db", "x-1", "-e", "dev", "--yes")
	if st := p.mustRun(0, "state", "show", "-e", "dev"); !strings.Contains(st.stdout, "failed (import)") {
		t.Errorf("a read that exits non-zero during an import:\n%s\n%s", r, st)
	}

	p.mustRun(0, "import", "data/ok", "o-1", "-e", "dev", "--yes")
	r = p.mustRun(1, "import", "data/ok", "o-2", "-e", "dev", "--yes")
	if strings.Contains(r.stderr, "import:") || !strings.Contains(r.stderr, `data/ok is already in the state (imported with id "o-1")`) ||
		!strings.Contains(r.stderr, "deployer state rm data/ok") {
		t.Errorf("deployer import onto an imported component should not speak of an import: block:\n%s", r)
	}
}

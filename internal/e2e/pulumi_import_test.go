//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outsideResource writes the resource id of the test provider's outside
// world (DEPLOYERTEST_CLOUD, set by the caller to dir): what exists in the
// cloud before deployer or Pulumi know of it.
func outsideResource(t *testing.T, dir, id, props string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
}

// createdOf counts the creates the test provider started for component
// addr's resource.
func createdOf(t *testing.T, j providerJournal, addr string) int {
	return startedOf(t, j, "create", addr)
}

// startedOf counts the operations op ("create", "update", "delete") the
// test provider started for component addr's resource.
func startedOf(t *testing.T, j providerJournal, op, addr string) int {
	n := 0
	for _, e := range j.entries(t) {
		if e.op == op && e.phase == "start" && strings.HasSuffix(e.urn, "::"+strings.ReplaceAll(addr, "/", "-")) {
			n++
		}
	}
	return n
}

// TestRealPulumiImport: through the real Pulumi CLI and the test provider,
// a PulumiResource with import: adopts a resource that exists outside
// deployer and Pulumi (DEPLOYERTEST_CLOUD) with Pulumi's import option: the
// plan shows "= import", the provider creates nothing for it, Pulumi and
// deployer hold it under its id with the properties read
// (lifecycle.imported_id), history shows the import and the next plan is
// No changes. A live resource that differs from the config in a field the
// provider replaces for, or one it would update in place (Pulumi v3.259.0
// imports, then updates), is refused before Pulumi runs the up, naming the
// field, with nothing changed or recorded, until the config matches: then
// the deploy imports it, updating nothing. An id that names nothing is
// Pulumi's error and records nothing.
func TestRealPulumiImport(t *testing.T) {
	pp := newPulumiProject(t)
	j := providerJournal(filepath.Join(pp.dir, "provider.journal"))
	t.Setenv("DEPLOYERTEST_JOURNAL", string(j))
	cloud := t.TempDir()
	t.Setenv("DEPLOYERTEST_CLOUD", cloud)
	outsideResource(t, cloud, "dt-outside", `{"length": 1, "name": "made-by-hand"}`)
	p := pp.stack("evolve", evolveYAML("db", "import: {id: dt-outside}, ", 1, ""))

	r := p.mustRun(0, "plan", "-e", "dev")
	if !strings.Contains(r.stdout, `= db (PulumiResource) import (id "dt-outside")`) || !strings.Contains(r.stdout, "1 to create, 0 to update, 0 to replace, 0 to delete, 1 to import") {
		t.Errorf("the plan should import data/db and create app/api:\n%s", r)
	}
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if n := createdOf(t, j, "data/db"); n != 0 || createdOf(t, j, "app/api") != 1 {
		t.Errorf("the import made the provider create data/db %d times (app/api %d):\n%s", n, createdOf(t, j, "app/api"), r)
	}
	if !strings.Contains(r.stdout, "1 created, 0 updated, 0 deleted, 1 imported") {
		t.Errorf("the deploy summary should count the import:\n%s", r)
	}
	if db := pp.export("evolve", "dev").held()["data/db"]; db.ID != "dt-outside" || db.Outputs["name"] != "made-by-hand" {
		t.Errorf("Pulumi should hold the resource it imported, id dt-outside named made-by-hand: %+v", db)
	}
	db := resource(t, p, "data/db")
	if db.Lifecycle.ImportedID != "dt-outside" || db.Outputs["id"] != "dt-outside" {
		t.Errorf("deployer's state should record the import and the id: %+v, outputs %v", db.Lifecycle, db.Outputs)
	}
	pp.sameResources("evolve", "dev")
	if r := p.mustRun(0, "history", "-e", "dev"); !strings.Contains(r.stdout, "imported data/db (id dt-outside)") {
		t.Errorf("history should show the import:\n%s", r)
	}
	if r := p.mustRun(0, "plan", "-e", "dev", "--refresh"); !strings.Contains(r.stdout, "No drift") || !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("after the import the plan should be No changes and a refresh find no drift:\n%s", r)
	}

	// A live resource whose keepers differ from the config: the provider
	// would replace it after the import. The deploy is refused before the
	// up, naming the field; nothing is created, replaced or deleted, and
	// neither Pulumi nor deployer records anything. With the config made to
	// match, the deploy adopts it.
	outsideResource(t, cloud, "dt-keepers", `{"length": 1, "keepers": {"v": "1"}, "name": "kept-by-hand"}`)
	q := pp.stack("other", strings.Replace(evolveYAML("db", "import: {id: dt-keepers}, ", 1, ""), "stack: evolve", "stack: other", 1))
	r = q.mustRun(1, "deploy", "-e", "dev", "--yes", "--component", "data/db")
	if !strings.Contains(r.stderr, `Error: data/db: the live resource "dt-keepers" differs from the config in keepers: Pulumi would import it, then replace it`) ||
		!strings.Contains(r.stdout, "0 deleted, 1 failed") {
		t.Errorf("an import Pulumi would follow with a replace should be refused, naming the field:\n%s", r)
	}
	if res := rawResources(t, q); len(res) != 0 || len(pp.export("other", "dev").held()) != 0 {
		t.Errorf("a refused import should record nothing, in deployer's state (%v) or Pulumi's", res)
	}
	if n := createdOf(t, j, "data/db"); n != 0 || j.count(t, "start", "delete") != 0 {
		t.Errorf("a refused import should create (%d) and delete (%d) nothing", n, j.count(t, "start", "delete"))
	}
	q.write("deployer.yaml", strings.Replace(string(q.read("deployer.yaml")), "length: 1}", "length: 1, keepers: {v: \"1\"}}", 1))
	q.mustRun(0, "deploy", "-e", "dev", "--yes", "--component", "data/db")
	if db := resource(t, q, "data/db"); db.Status != "ready" || pp.export("other", "dev").held()["data/db"].ID != "dt-keepers" {
		t.Errorf("with the config matching, the deploy should adopt dt-keepers: %s", db.Status)
	}

	// An id that names nothing: the preview fails with Pulumi's error, the
	// up never runs, nothing is recorded.
	u := pp.stack("inplace", strings.Replace(evolveYAML("db", "import: {id: dt-absent}, ", 1, ""), "stack: evolve", "stack: inplace", 1))
	r = u.mustRun(1, "deploy", "-e", "dev", "--yes", "--component", "data/db")
	if !strings.Contains(r.stderr, "resource 'dt-absent' does not exist") || !strings.Contains(r.stderr, "nothing was changed") {
		t.Errorf("importing an id that names nothing should be refused with Pulumi's error from the preview, before the up:\n%s", r)
	}
	if res := rawResources(t, u); len(res) != 0 {
		t.Errorf("a failed import of nothing should record nothing: %v", res)
	}

	// A live resource that differs in what the provider updates in place:
	// Pulumi would import it, then update it, which the plan does not show.
	// The deploy is refused before the up, naming the field; nothing is
	// created, updated or deleted, and nothing recorded.
	outsideResource(t, cloud, "dt-longer", `{"length": 3, "name": "a-b-c"}`)
	u.write("deployer.yaml", strings.Replace(evolveYAML("db", "import: {id: dt-longer}, ", 1, ""), "stack: evolve", "stack: inplace", 1))
	r = u.mustRun(1, "deploy", "-e", "dev", "--yes", "--component", "data/db")
	if !strings.Contains(r.stderr, `data/db: the live resource "dt-longer" differs from the config in length: Pulumi would import it, then update it`) ||
		!strings.Contains(r.stderr, "make the config match the live resource, then deploy again") {
		t.Errorf("an import Pulumi would follow with an update should be refused, naming the field:\n%s", r)
	}
	for _, op := range []string{"create", "update", "delete"} {
		if n := startedOf(t, j, op, "data/db"); n != 0 {
			t.Errorf("a refused import made the provider %s data/db %d times", op, n)
		}
	}
	if res := rawResources(t, u); len(res) != 0 {
		t.Errorf("a refused import should record nothing: %v", res)
	}
	if db, ok := pp.export("inplace", "dev").held()["data/db"]; ok {
		t.Errorf("Pulumi should hold nothing after a refused import: %+v", db)
	}
	// With the config made to match, the deploy imports it, updating nothing.
	u.write("deployer.yaml", strings.Replace(string(u.read("deployer.yaml")), "length: 1}", "length: 3}", 1))
	r = u.mustRun(0, "deploy", "-e", "dev", "--yes", "--component", "data/db")
	if !strings.Contains(r.stdout, "1 imported") || startedOf(t, j, "update", "data/db") != 0 || createdOf(t, j, "data/db") != 0 {
		t.Errorf("with the config matching, the deploy should import dt-longer and update nothing (%d updates):\n%s", startedOf(t, j, "update", "data/db"), r)
	}
	if db := pp.export("inplace", "dev").held()["data/db"]; db.ID != "dt-longer" || db.Outputs["length"] != 3.0 {
		t.Errorf("Pulumi should hold dt-longer as it was made, length 3: %+v", db)
	}
}

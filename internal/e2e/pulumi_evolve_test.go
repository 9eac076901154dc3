//go:build unix

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Moves and protect on the Pulumi engine with the real CLI and the test
// provider (docs/operations.md): a moved component keeps its cloud
// resources (Pulumi aliases), a protected one carries Pulumi's protect.

// evolveYAML is stack "evolve": data/{db} (a RandomName of length n,
// db written as name, with attrs such as "protect: true, ") and app/api,
// which depends on it.
func evolveYAML(name, attrs string, n int, extra string) string {
	return "stack: evolve\nbackend: {state: file://../.deployer, lock: file://../.deployer}\nenvironments: {dev: {}}\n" + extra +
		"services:\n  data:\n    components:\n" +
		fmt.Sprintf("      %s: {kind: PulumiResource, %sconfig: {type: \"deployertest:index:RandomName\", properties: {length: %d}}}\n", name, attrs, n) +
		"  app:\n    components:\n" +
		"      api: {kind: PulumiResource, depends_on: [data/" + name + "], config: {type: \"deployertest:index:RandomName\", properties: {length: 2}}}\n"
}

// TestRealPulumiMoves: a moved: entry renames a Pulumi component without
// replacing its resource (same id, no create or delete by the provider),
// the plan after it has no changes and refresh no drift; a component moved
// with deployer state mv keeps its resource too, at its next deploy.
func TestRealPulumiMoves(t *testing.T) {
	pp := newPulumiProject(t)
	j := providerJournal(filepath.Join(pp.dir, "provider.journal"))
	t.Setenv("DEPLOYERTEST_JOURNAL", string(j))
	p := pp.stack("evolve", evolveYAML("db", "", 1, ""))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	before := pp.export("evolve", "dev").held()
	if before["data/db"].ID == "" || before["app/api"].ID == "" {
		t.Fatalf("Pulumi should hold data/db and app/api: %+v", before)
	}
	creates := j.count(t, "done", "create")

	p.write("deployer.yaml", evolveYAML("database", "", 1, "moved:\n  - {from: data/db, to: data/database}\n"))
	r := p.mustRun(0, "plan", "-e", "dev")
	if !strings.Contains(r.stdout, "data/db -> data/database (moved)") || !strings.Contains(r.stdout, "0 to create") || !strings.Contains(r.stdout, "0 to delete") {
		t.Errorf("the plan should show the move and no create or delete:\n%s", r)
	}
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	after := pp.export("evolve", "dev").held()
	if _, ok := after["data/db"]; ok || after["data/database"].ID != before["data/db"].ID || after["app/api"].ID != before["app/api"].ID {
		t.Errorf("the move should keep the resource under data/database with its id %q: %+v\n%s", before["data/db"].ID, after, r)
	}
	if n := j.count(t, "start", "create") - creates; n != 0 || j.count(t, "start", "delete") != 0 {
		t.Errorf("the move made the provider create %d and delete %d resources:\n%s", n, j.count(t, "start", "delete"), r)
	}
	if urn := pp.pulumiState("evolve", "dev").Resources["data/database"].Pulumi; urn == nil || !strings.HasSuffix(urn.URN, "::data-database") {
		t.Errorf("deployer's state should record the renamed URN: %+v", urn)
	}
	pp.sameResources("evolve", "dev")
	if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("the plan after the move should have no changes:\n%s", r)
	}
	if r := p.mustRun(0, "plan", "-e", "dev", "--refresh"); !strings.Contains(r.stdout, "No drift") || !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("a refresh after the move should find no drift:\n%s", r)
	}

	// state mv moves deployer's entry only; the next deploy of the
	// component (an in-place update) renames it in Pulumi's state too.
	p.mustRun(0, "state", "mv", "data/database", "data/store", "-e", "dev")
	p.write("deployer.yaml", evolveYAML("store", "", 1, ""))
	if r := p.mustRun(0, "plan", "-e", "dev", "--refresh"); !strings.Contains(r.stdout, "No drift") {
		t.Errorf("a refresh before Pulumi learns the new name should find the resource, no drift:\n%s", r)
	}
	p.write("deployer.yaml", evolveYAML("store", "", 3, ""))
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	after = pp.export("evolve", "dev").held()
	if _, ok := after["data/database"]; ok || after["data/store"].ID != before["data/db"].ID {
		t.Errorf("after state mv and an update the resource should be data/store with id %q: %+v\n%s", before["data/db"].ID, after, r)
	}
	if n := j.count(t, "start", "create") - creates; n != 0 || j.count(t, "start", "delete") != 0 || j.count(t, "done", "update") != 1 {
		t.Errorf("after state mv the update should update in place: %d creates, %d deletes, %d updates\n%s",
			n, j.count(t, "start", "delete"), j.count(t, "done", "update"), r)
	}
	pp.sameResources("evolve", "dev")
}

// TestRealPulumiProtect: a protected Pulumi component is refused by
// deployer (exit 6) when removed or destroyed, before Pulumi runs; Pulumi's
// state marks it and its resource protected, so Pulumi itself refuses to
// delete it too; protect: false, deploy, then destroy deletes it.
func TestRealPulumiProtect(t *testing.T) {
	pp := newPulumiProject(t)
	p := pp.stack("evolve", evolveYAML("db", "protect: true, ", 1, ""))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	exp := pp.export("evolve", "dev")
	id := exp.held()["data/db"].ID
	for _, r := range exp.Resources {
		isDB := strings.HasSuffix(r.URN, "::data-db")
		if isDB != r.Protect {
			t.Errorf("Pulumi's state should protect exactly data/db's component and resource: %s protect=%v", r.URN, r.Protect)
		}
	}
	for _, args := range [][]string{
		{"destroy", "-e", "dev", "--yes"},
		{"destroy", "-e", "dev", "--yes", "--component", "data/db", "--with-dependents"},
	} {
		if r := p.mustRun(6, args...); !strings.Contains(r.stderr, "data/db is protected") {
			t.Errorf("%v should name data/db as protected:\n%s", args, r)
		}
	}
	p.write("deployer.yaml", evolveYAML("other", "", 1, ""))
	if r := p.mustRun(6, "deploy", "-e", "dev", "--yes"); !strings.Contains(r.stderr, "data/db is protected") {
		t.Errorf("removing data/db should be refused:\n%s", r)
	}
	if got := pp.export("evolve", "dev").held()["data/db"].ID; got != id {
		t.Fatalf("data/db should be untouched (id %q), Pulumi holds %q", id, got)
	}
	// Pulumi's own guard: its destroy refuses the protected resources.
	cmd := pp.pulumiCmd("evolve", "dev", "destroy", "--yes", "--skip-preview", "--stack", "organization/evolve/dev")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "protected") {
		t.Errorf("pulumi destroy should refuse the protected resource: %v\n%s", err, out)
	}

	p.write("deployer.yaml", evolveYAML("db", "protect: false, ", 1, ""))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	for _, r := range pp.export("evolve", "dev").Resources {
		if r.Protect {
			t.Errorf("after protect: false and a deploy Pulumi still protects %s", r.URN)
		}
	}
	p.mustRun(0, "destroy", "-e", "dev", "--yes")
	if held := pp.export("evolve", "dev").held(); len(held) != 0 {
		t.Errorf("destroy after protect: false should delete everything: %+v", held)
	}
}

// TestRealPulumiCLIRuns counts the Pulumi CLI runs of each operation
// through a logging shim (docs/pulumi.md#what-deployer-asks-pulumi), a
// check that does not depend on the machine's load: the first deploy of a
// stack asks the CLI's version (once per binary) and creates the stack; a
// deploy that changes something runs `up` and one `stack export`; one that
// changes nothing runs none; destroy runs `destroy` and one `stack export`.
func TestRealPulumiCLIRuns(t *testing.T) {
	pp := newPulumiProject(t)
	shim := pulumiShim(t, pp.cli)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the CLI's version is not known yet
	p := pp.stack("evolve", evolveYAML("db", "", 1, ""))
	runs := func(args ...string) []string {
		t.Helper()
		shim.reset()
		p.mustRun(0, args...)
		var out []string
		for _, r := range shim.runs() {
			out = append(out, r.what)
		}
		return out
	}
	for _, tc := range []struct {
		what string
		yaml string
		args []string
		want []string
	}{
		{"first deploy", "", []string{"deploy", "-e", "dev", "--yes"}, []string{"version", "stack select", "stack init", "up", "stack export"}},
		{"update", evolveYAML("db", "", 2, ""), []string{"deploy", "-e", "dev", "--yes"}, []string{"up", "stack export"}},
		{"no-op", "", []string{"deploy", "-e", "dev", "--yes"}, nil},
		{"destroy", "", []string{"destroy", "-e", "dev", "--yes"}, []string{"destroy", "stack export"}},
	} {
		if tc.yaml != "" {
			p.write("deployer.yaml", tc.yaml)
		}
		if got := runs(tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("%s ran the Pulumi CLI %d times: %q, want %q", tc.what, len(got), got, tc.want)
		}
	}
}

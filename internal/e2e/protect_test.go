//go:build unix

package e2e

// protect: true and destroying what others need (docs/operations.md), on
// the file backends and on S3 state with DynamoDB locks.

import (
	"strings"
	"testing"
)

const protectYAML = `stack: guarded
%BACKEND%environments: {dev: {}}
services:
  data:
    components:
      db:
        kind: Command
        protect: true
        config: {v: "1"}
        command: {create: echo create-db >> ran.log, update: echo update-db >> ran.log, delete: echo delete-db >> ran.log, triggers: ["1"]}
  app:
    components:
      api: {kind: Command, config: {v: "1"}, command: {create: echo create-api >> ran.log, delete: echo delete-api >> ran.log}}
      web: {kind: Command, depends_on: [api], config: {v: "1"}, command: {create: echo create-web >> ran.log, delete: echo delete-web >> ran.log}}
`

// refusedProtected checks a command refused with exit 6 naming data/db and
// the remedy, before any lock was taken, that nothing ran (ran.log, the
// marker every command appends to, stays empty) and that no lock is left.
func refusedProtected(t *testing.T, p *project, args ...string) {
	t.Helper()
	p.write("ran.log", "")
	r := p.mustRun(6, args...)
	if !strings.Contains(r.stderr, "data/db is protected") || !strings.Contains(r.stderr, "protect: false") {
		t.Errorf("%v should name data/db and say to set protect: false:\n%s", args, r)
	}
	if strings.Contains(r.stderr, "Acquired lock") {
		t.Errorf("%v should be refused before any lock is taken:\n%s", args, r)
	}
	if log := string(p.read("ran.log")); log != "" {
		t.Errorf("%v ran commands: %q", args, log)
	}
	noLockLeft(t, p, args)
}

// noLockLeft checks state locks finds no lock held after the command args.
func noLockLeft(t *testing.T, p *project, args []string) {
	t.Helper()
	if r := p.mustRun(0, "state", "locks", "-e", "dev"); !strings.Contains(r.stdout+r.stderr, "No locks held.") {
		t.Errorf("%v left a lock:\n%s", args, r)
	}
}

// TestProtectSurvivesEveryPath: a protected component survives a replace,
// destroy, destroy --service, destroy --component, destroy --all and its
// removal from deployer.yaml (the state remembers protect); protect: false,
// deploy (nothing runs), then remove deletes it.
func TestProtectSurvivesEveryPath(t *testing.T) {
	projectOnBackends(t, protectYAML, func(t *testing.T, p *project, yaml string, env []string) {
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		serial := p.remoteState("dev").Serial

		p.write("deployer.yaml", strings.Replace(yaml, `triggers: ["1"]`, `triggers: ["2"]`, 1))
		refusedProtected(t, p, "deploy", "-e", "dev", "--yes")
		refusedProtected(t, p, "plan", "-e", "dev")
		p.write("deployer.yaml", yaml)

		refusedProtected(t, p, "destroy", "-e", "dev", "--yes")
		refusedProtected(t, p, "destroy", "-e", "dev", "--yes", "--service", "data", "--with-dependents")
		refusedProtected(t, p, "destroy", "-e", "dev", "--yes", "--component", "data/db", "--with-dependents")
		p.write("ran.log", "")
		r := p.mustRun(1, "destroy", "-e", "dev", "--yes", "--all")
		if !strings.Contains(r.stdout+r.stderr, "data/db is protected") {
			t.Errorf("destroy --all should name data/db:\n%s", r)
		}
		if log := string(p.read("ran.log")); log != "" {
			t.Errorf("destroy --all ran commands: %q", log)
		}
		noLockLeft(t, p, []string{"destroy", "--all"})

		// Removed from deployer.yaml: the state's record protects it.
		removed := strings.Replace(yaml, "        protect: true\n", "", 1)
		removed = removed[:strings.Index(removed, "  data:")] + removed[strings.Index(removed, "  app:"):]
		p.write("deployer.yaml", removed)
		refusedProtected(t, p, "deploy", "-e", "dev", "--yes")
		if got := p.remoteState("dev"); got.Serial != serial || got.Resources["data/db"].Kind == "" {
			t.Fatalf("refused runs should write nothing: serial %d (was %d)", got.Serial, serial)
		}

		// protect: false, deploy (recorded, nothing runs), then remove.
		p.write("deployer.yaml", strings.Replace(yaml, "protect: true", "protect: false", 1))
		pj := parsePlan(t, p.mustRun(0, "plan", "-e", "dev", "--json"))
		if got := changedSteps(pj); len(got) != 1 || got[0] != "data/db" {
			t.Errorf("protect: false should be one change of data/db: %v", got)
		}
		p.write("ran.log", "")
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); log != "" {
			t.Errorf("recording protect: false should run nothing: %q", log)
		}
		p.write("deployer.yaml", removed)
		r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); log != "delete-db\n" {
			t.Errorf("after protect: false and a deploy, removing data/db should delete it; ran.log %q\n%s", log, r)
		}
	})
}

// TestDestroyRefusesWhatOthersNeed: destroy --component/--service of what
// components outside the target depend on refuses and names them;
// --with-dependents destroys them too, dependents first.
func TestDestroyRefusesWhatOthersNeed(t *testing.T) {
	yaml := strings.Replace(protectYAML, "        protect: true\n", "", 1)
	yaml = strings.Replace(yaml, "api: {kind: Command, ", "api: {kind: Command, depends_on: [data/db], ", 1)
	projectOnBackends(t, yaml, func(t *testing.T, p *project, yaml string, env []string) {
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		p.write("ran.log", "")
		for _, args := range [][]string{{"--component", "data/db"}, {"--service", "data"}} {
			r := p.mustRun(6, append([]string{"destroy", "-e", "dev", "--yes"}, args...)...)
			if !strings.Contains(r.stderr, "app/api depends on data/db") || !strings.Contains(r.stderr, "--with-dependents") {
				t.Errorf("destroy %v should name app/api and --with-dependents:\n%s", args, r)
			}
			if strings.Contains(r.stderr, "Acquired lock") {
				t.Errorf("destroy %v should be refused before the lock:\n%s", args, r)
			}
		}
		r := p.mustRun(6, "destroy", "-e", "dev", "--yes", "--component", "app/api")
		if !strings.Contains(r.stderr, "app/web depends on app/api") {
			t.Errorf("destroy --component app/api should name app/web:\n%s", r)
		}
		// --with-dependents keeps what --exclude leaves out: the refusal says so.
		r = p.mustRun(6, "destroy", "-e", "dev", "--yes", "--exclude", "app", "--with-dependents")
		if !strings.Contains(r.stderr, "app/api depends on data/db (left out by --exclude)") || strings.Contains(r.stderr, "destroy them too with --with-dependents") {
			t.Errorf("destroy --exclude app --with-dependents should name app/api as excluded, not suggest --with-dependents:\n%s", r)
		}
		if log := string(p.read("ran.log")); log != "" {
			t.Fatalf("refused destroys ran commands: %q", log)
		}
		p.mustRun(0, "destroy", "-e", "dev", "--yes", "--component", "data/db", "--with-dependents", "--parallelism", "1")
		if log := string(p.read("ran.log")); log != "delete-web\ndelete-api\ndelete-db\n" {
			t.Errorf("--with-dependents should delete the dependents first; ran.log:\n%s", log)
		}
		if st := p.remoteState("dev"); len(st.Resources) != 0 {
			t.Errorf("everything should be destroyed: %v", st.Resources)
		}
	})
}

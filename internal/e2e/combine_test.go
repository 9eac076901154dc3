//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// journalCmd is a Command component's command block whose scripts append
// "ACTION ADDRESS" to ran.log; create and update print the output id, the
// component's address with / as - (so it changes with a move).
const journalCmd = `{create: 'echo create $DEPLOYER_COMPONENT >> ran.log; printf "{\"id\":\"%s\"}" "$(echo $DEPLOYER_COMPONENT | tr / -)" > "$DEPLOYER_OUTPUTS"', ` +
	`update: 'echo update $DEPLOYER_COMPONENT >> ran.log; printf "{\"id\":\"%s\"}" "$(echo $DEPLOYER_COMPONENT | tr / -)" > "$DEPLOYER_OUTPUTS"', ` +
	`delete: 'echo delete $DEPLOYER_COMPONENT >> ran.log'}`

// moveUpdateYAML is data/DB, SVC/api (on the db, config version) and
// SVC/web (on api, no config of its own), after the moves in moved.
func moveUpdateYAML(db, svc string, version int, moved string) string {
	var b strings.Builder
	b.WriteString("stack: s\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\n")
	b.WriteString(moved)
	fmt.Fprintf(&b, "services:\n  data:\n    components:\n      %s: {kind: Command, config: {v: 1}, command: %s}\n", db, journalCmd)
	fmt.Fprintf(&b, "  %s:\n    components:\n", svc)
	fmt.Fprintf(&b, "      api: {kind: Command, depends_on: [data/%s], config: {version: %d, db: '${data/%s.id}'}, command: %s}\n", db, version, db, journalCmd)
	fmt.Fprintf(&b, "      web: {kind: Command, depends_on: [%s/api], command: %s}\n", svc, journalCmd)
	return b.String()
}

// TestMoveAndUpdateInOneDeploy: moving data/db and the service app and
// bumping app/api's version in one change runs api's update and web's
// (its input, api's id, changed with the move); the summary counts both,
// the state records web's new inputs, and the next plan is empty: nothing
// runs again.
func TestMoveAndUpdateInOneDeploy(t *testing.T) {
	p := newProject(t, moveUpdateYAML("db", "app", 1, ""))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", moveUpdateYAML("database", "application", 2,
		"moved:\n  - {from: data/db, to: data/database}\n  - {from: app, to: application}\n"))
	p.write("ran.log", "")
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if log := string(p.read("ran.log")); log != "update application/api\nupdate application/web\n" {
		t.Errorf("the deploy should update application/api, then application/web; ran.log:\n%s", log)
	}
	if !strings.Contains(r.stdout, "0 created, 2 updated, 0 deleted") {
		t.Errorf("the summary should count the two updates that ran:\n%s", r)
	}
	if r := p.run("plan", "-e", "dev", "--detailed-exitcode"); r.code != 0 {
		t.Errorf("after the deploy the plan should be empty:\n%s", r)
	}
	p.write("ran.log", "")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if log := string(p.read("ran.log")); log != "" {
		t.Errorf("a second deploy should run nothing; ran.log:\n%s", log)
	}
}

// secretOutputYAML is data/db, whose create prints a password output,
// and two components on it; outputs is a top-level outputs: block or "".
func secretOutputYAML(outputs string) string {
	return "stack: s\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\n" + outputs + `services:
  data:
    components:
      db: {kind: Command, command: {create: 'echo create data/db >> ran.log; echo "{\"password\":\"hunter2\"}" > $DEPLOYER_OUTPUTS', delete: 'echo delete data/db >> ran.log'}}
      a: {kind: Command, depends_on: [data/db], command: {create: 'echo create data/a >> ran.log', delete: 'echo delete data/a >> ran.log'}}
      b: {kind: Command, depends_on: [data/db], command: {create: 'echo create data/b >> ran.log', delete: 'echo delete data/b >> ran.log'}}
`
}

// TestUnsealableStateRefusedFirst: a deploy whose state will hold a
// secret (a stack output naming a password) and that has no key to seal
// it is refused before anything runs, naming the fix. When a secret shows
// up only at run time, the run's state goes to the errored file: the
// summary says the state was not written, the next deploy is refused
// until the file is pushed or discarded (naming both), the printed push
// works without a terminal and removes the file, and nothing runs twice.
func TestUnsealableStateRefusedFirst(t *testing.T) {
	p := newProject(t, secretOutputYAML("outputs: {db_password: '${data/db.password}'}\n"))
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "DEPLOYER_SECRETS_PASSPHRASE") || !strings.Contains(r.stderr, "awskms://") {
		t.Errorf("the refusal should name the passphrase and KMS:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "ran.log")); err == nil {
		t.Errorf("nothing should run before the state is known to be sealable; ran.log:\n%s", p.read("ran.log"))
	}

	p.write("deployer.yaml", secretOutputYAML(""))
	r = p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stdout, "state-not-written") || strings.Contains(r.stdout, " success ") {
		t.Errorf("the summary should say the state was not written:\n%s", r)
	}
	// The generated passphrase is never printed: the error names its file.
	m := regexp.MustCompile(`DEPLOYER_SECRETS_PASSPHRASE_FILE=(\S+) (deployer state push .*)`).FindStringSubmatch(r.stderr)
	if m == nil || !strings.HasSuffix(m[2], " --yes") {
		t.Fatalf("the error should print a push command that runs without a terminal:\n%s", r)
	}
	p.env = append(p.env, "DEPLOYER_SECRETS_PASSPHRASE_FILE="+filepath.Join(p.dir, m[1]))
	created := string(p.read("ran.log"))

	for _, args := range [][]string{{"deploy", "-e", "dev", "--yes"}, {"deploy", "-e", "dev", "--refresh-only", "--yes"}, {"destroy", "-e", "dev", "--yes"}} {
		r = p.mustRun(1, args...)
		if !strings.Contains(r.stderr, "deployer state push deployer-errored-s-dev.json -s s -e dev --yes") || !strings.Contains(r.stderr, "rm deployer-errored-s-dev.json") {
			t.Errorf("%v should be refused while the errored state waits, naming push and rm:\n%s", args, r)
		}
	}
	if log := string(p.read("ran.log")); log != created {
		t.Errorf("nothing should run while the errored state waits; ran.log:\n%s", log)
	}
	push := strings.Fields(m[2])[1:]
	r = p.mustRun(0, push...)
	if _, err := os.Stat(filepath.Join(p.dir, "deployer-errored-s-dev.json")); err == nil {
		t.Errorf("a pushed errored state should be removed:\n%s", r)
	}
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if log := string(p.read("ran.log")); log != created {
		t.Errorf("nothing should run twice; ran.log:\n%s", log)
	}
}

// TestRefreshOnlyDropsTheOutputsOfWhatIsGone: a refresh-only that removes
// a gone component from the state drops the stack outputs it gave, and
// plan --refresh-only --json agrees with itself: "changed" with a status
// that says so.
func TestRefreshOnlyDropsTheOutputsOfWhatIsGone(t *testing.T) {
	p := newProject(t, `stack: s
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
outputs: {web_url: '${app/web.url}', api_url: '${app/api.url}'}
services:
  app:
    components:
      web: {kind: Command, command: {create: 'touch web.live; echo "{\"url\":\"http://web\"}" > $DEPLOYER_OUTPUTS', read: 'test -f web.live && echo "{}" || echo null', delete: rm -f web.live}}
      api: {kind: Command, command: {create: 'echo "{\"url\":\"http://api\"}" > $DEPLOYER_OUTPUTS'}}
`)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if r := p.mustRun(0, "output", "-e", "dev", "--json"); !strings.Contains(r.stdout, "http://web") {
		t.Fatalf("web_url should be an output:\n%s", r)
	}
	if err := os.Remove(filepath.Join(p.dir, "web.live")); err != nil {
		t.Fatal(err)
	}
	r := p.mustRun(2, "plan", "-e", "dev", "--refresh-only", "--json", "--detailed-exitcode")
	var j struct {
		Changed bool   `json:"changed"`
		Status  string `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatal(err)
	}
	if !j.Changed || j.Status == "no-changes" {
		t.Errorf("plan --refresh-only --json with drift should say changed and not no-changes:\n%s", r)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--refresh-only", "--yes")
	r = p.mustRun(0, "output", "-e", "dev", "--json")
	if strings.Contains(r.stdout, "web_url") || !strings.Contains(r.stdout, "http://api") {
		t.Errorf("the refresh-only removed app/web: its output should be gone, api_url kept:\n%s", r)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if r := p.mustRun(0, "output", "-e", "dev", "--json"); !strings.Contains(r.stdout, "http://web") {
		t.Errorf("the deploy creating app/web again should bring web_url back:\n%s", r)
	}
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
}

// TestChainedMovesAreFollowed: moved: {from: a, to: b} then {from: b,
// to: c} (an entry kept until every environment applied it, then the
// component renamed again) moves a state at a to c, and a state at b to
// c, running nothing; a cycle of moves is a config error naming it.
func TestChainedMovesAreFollowed(t *testing.T) {
	yaml := func(name, moved string) string {
		return "stack: s\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}, prod: {}}\n" + moved +
			"services:\n  data:\n    components:\n      " + name + ": {kind: Command, command: " + journalCmd + "}\n" +
			"      app: {kind: Command, depends_on: [data/" + name + "], command: " + journalCmd + "}\n"
	}
	p := newProject(t, yaml("a", ""))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.mustRun(0, "deploy", "-e", "prod", "--yes")
	p.write("deployer.yaml", yaml("b", "moved:\n  - {from: data/a, to: data/b}\n"))
	p.mustRun(0, "deploy", "-e", "dev", "--yes") // dev is at b, prod still at a
	chained := yaml("c", "moved:\n  - {from: data/a, to: data/b}\n  - {from: data/b, to: data/c}\n")
	p.write("deployer.yaml", chained)
	p.write("ran.log", "")
	for _, env := range []string{"dev", "prod"} {
		r := p.mustRun(0, "deploy", "-e", env, "--yes")
		if !strings.Contains(r.stdout, "-> data/c (moved)") {
			t.Errorf("%s: the deploy should move data/a or data/b to data/c:\n%s", env, r)
		}
		if log := string(p.read("ran.log")); log != "" {
			t.Errorf("%s: a move should run nothing; ran.log:\n%s", env, log)
		}
		p.mustRun(0, "plan", "-e", env, "--detailed-exitcode")
		if r := p.mustRun(0, "state", "list", "-e", env); r.stdout != "data/app\ndata/c\n" {
			t.Errorf("%s: the state should hold data/app and data/c:\n%s", env, r)
		}
	}
	p.write("deployer.yaml", yaml("c", "moved:\n  - {from: data/a, to: data/b}\n  - {from: data/b, to: data/a}\n"))
	if r := p.mustRun(1, "plan", "-e", "dev"); !strings.Contains(r.stderr, "cycle") || !strings.Contains(r.stderr, "data/a -> data/b -> data/a") {
		t.Errorf("a cycle of moves should be a config error naming it:\n%s", r)
	}
}

// TestHistoryAndSummariesSayWhatHappened: a move-only deploy counts its
// moves; history names what a deploy deleted and a destroy destroyed,
// shows a state rm as forgotten (not -1), and lists the state-push of an
// errored state beside the deploy that wrote it; output NAME of a secret
// is refused as --raw is.
func TestHistoryAndSummariesSayWhatHappened(t *testing.T) {
	yaml := func(db, moved string) string {
		return "stack: s\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\n" + moved +
			"services:\n  data:\n    components:\n      " + db + ": {kind: Command, command: " + journalCmd + "}\n" +
			"  app:\n    components:\n      api: {kind: Command, depends_on: [data/" + db + "], command: " + journalCmd + "}\n" +
			"      web: {kind: Command, depends_on: [app/api], command: " + journalCmd + "}\n"
	}
	p := newProject(t, yaml("db", ""))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", yaml("database", "moved:\n  - {from: data/db, to: data/database}\n"))
	if r := p.mustRun(0, "deploy", "-e", "dev", "--yes"); !strings.Contains(r.stdout, "0 created, 0 updated, 0 deleted, 1 moved") {
		t.Errorf("a move-only deploy should count its move:\n%s", r)
	}
	p.mustRun(0, "state", "rm", "-e", "dev", "app/web", "--yes")
	p.mustRun(0, "destroy", "-e", "dev", "--yes")
	r := p.mustRun(0, "history", "-e", "dev")
	rows := strings.Split(r.stdout, "\n")
	if len(rows) < 3 || !strings.Contains(rows[1], "destroy") || !strings.Contains(rows[1], "destroyed app/api, data/database") {
		t.Errorf("the destroy row should name what it destroyed:\n%s", r)
	}
	if !strings.Contains(rows[2], "state-rm") || !strings.HasSuffix(strings.TrimSpace(rows[2]), "forgot app/web") || strings.Contains(rows[2], "~0 -1") {
		t.Errorf("the state-rm row should say forgot, not -1:\n%s", r)
	}

	s := newProject(t, secretOutputYAML(""))
	s.env = []string{"DEPLOYER_SECRETS_PASSPHRASE="}
	r = s.mustRun(1, "deploy", "-e", "dev", "--yes")
	m := regexp.MustCompile(`DEPLOYER_SECRETS_PASSPHRASE_FILE=(\S+) deployer (state push .*)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("want an errored state with a generated passphrase:\n%s", r)
	}
	s.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=", "DEPLOYER_SECRETS_PASSPHRASE_FILE=" + filepath.Join(s.dir, m[1])}
	s.mustRun(0, strings.Fields(m[2])...)
	r = s.mustRun(0, "history", "-e", "dev")
	// A push imports no history record from the file (a file's records
	// are not trusted, docs/state-format.md#errored-state-files): history
	// shows the push itself.
	if !strings.Contains(r.stdout, "state-push") {
		t.Errorf("history should list the state-push:\n%s", r)
	}
	s.write("deployer.yaml", secretOutputYAML("outputs: {db_password: '${data/db.password}', note: '${data/db.password}'}\n"))
	s.mustRun(0, "deploy", "-e", "dev", "--yes")
	for _, args := range [][]string{{"output", "db_password", "-e", "dev"}, {"output", "db_password", "-e", "dev", "--json"}, {"output", "note", "-e", "dev"}} {
		if r := s.mustRun(2, args...); r.stdout != "" || !strings.Contains(r.stderr, "--show-secrets") {
			t.Errorf("%v of a secret should be refused, naming --show-secrets:\n%s", args, r)
		}
	}
	if r := s.mustRun(0, "output", "db_password", "-e", "dev", "--show-secrets"); !strings.Contains(r.stdout, "hunter2") {
		t.Errorf("--show-secrets should print it:\n%s", r)
	}
}

// TestDeployReplace: deploy --replace ADDR (repeatable) replaces a
// component whose config forces nothing, its dependent updated for the new
// instance; a saved plan --replace applies the same; a protected one is
// refused (exit 6), and an address not in the state is an error.
func TestDeployReplace(t *testing.T) {
	p := newProject(t, moveUpdateYAML("db", "app", 1, ""))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("ran.log", "")
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes", "--replace", "app/web", "--replace", "data/db")
	lines := strings.Fields(strings.ReplaceAll(string(p.read("ran.log")), " ", "_"))
	slices.Sort(lines)
	if got := strings.Join(lines, " "); got != "create_app/web create_data/db delete_app/web delete_data/db" {
		t.Errorf("--replace should delete and create both (app/api's input, the id, is the same); ran:\n%s\n%s", got, r)
	}
	if !strings.Contains(r.stdout, "2 replaced") {
		t.Errorf("the summary should count the replacements:\n%s", r)
	}
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	p.write("ran.log", "")
	p.mustRun(2, "plan", "-e", "dev", "--replace", "app/api", "--out", "r.plan", "--detailed-exitcode")
	p.mustRun(0, "deploy", "--plan", "r.plan", "--yes")
	if log := string(p.read("ran.log")); log != "delete app/api\ncreate app/api\n" {
		t.Errorf("the saved plan should replace app/api; ran.log:\n%s", log)
	}
	if r := p.mustRun(1, "plan", "-e", "dev", "--replace", "app/nope"); !strings.Contains(r.stderr, "--replace app/nope: no such component") {
		t.Errorf("an unknown address should be refused:\n%s", r)
	}
	p.write("deployer.yaml", strings.Replace(moveUpdateYAML("db", "app", 1, ""), "db: {kind: Command,", "db: {kind: Command, protect: true,", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if r := p.mustRun(6, "deploy", "-e", "dev", "--yes", "--replace", "data/db"); !strings.Contains(r.stderr, "data/db") {
		t.Errorf("replacing a protected component should be refused:\n%s", r)
	}
}

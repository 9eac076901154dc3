//go:build unix

package e2e

import (
	"fmt"
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

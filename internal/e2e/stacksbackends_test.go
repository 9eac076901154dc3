//go:build unix

package e2e

import (
	"strings"
	"testing"
)

// Stacks on their own default file://.deployer cannot read each other: a
// StackReference reads the producer's state from the reader's backend.
// stacks warns, plan/deploy --all refuse before planning, both with the
// fix, and the fix (one backend.state) works.
func TestAllRefusesStacksWhoseReferencesCannotReachTheProducersState(t *testing.T) {
	p := &project{t: t, dir: t.TempDir()}
	p.write("net/deployer.yaml", "stack: net\nenvironments: {dev: {}}\nservices:\n  vpc:\n    components:\n"+
		"      main: {kind: Command, command: {create: \"echo '{\\\"id\\\": \\\"vpc-1\\\"}' > $DEPLOYER_OUTPUTS\"}}\n")
	p.write("app/deployer.yaml", "stack: app\nenvironments: {dev: {}}\nservices:\n  web:\n    components:\n"+
		"      net: {kind: StackReference, config: {stack: net}}\n"+
		"      site: {kind: Command, depends_on: [net], command: {create: \"true\"}}\n")
	const fix = "give every stack of the repository the same backend.state"

	r := p.mustRun(0, "stacks")
	if !strings.Contains(r.stderr, "warning: stack app reads stack net, but their states live apart") || !strings.Contains(r.stderr, fix) {
		t.Fatalf("stacks: want a warning naming both stacks and the fix:\n%s", r)
	}
	for _, args := range [][]string{{"plan", "--all", "-e", "dev"}, {"deploy", "--all", "-e", "dev", "--yes"}} {
		r := p.run(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "stack app reads stack net, but their states live apart") || !strings.Contains(r.stderr, fix) {
			t.Fatalf("%v: want a refusal with the fix:\n%s", args, r)
		}
		if strings.Contains(r.stdout, "create") {
			t.Fatalf("%v planned before refusing:\n%s", args, r)
		}
	}

	// The fix the message gives.
	p.env = []string{"DEPLOYER_BACKEND_STATE=file://" + p.dir + "/.deployer", "DEPLOYER_BACKEND_LOCK=file://" + p.dir + "/.deployer"}
	p.mustRun(0, "deploy", "--all", "-e", "dev", "--yes")
	if r := p.mustRun(0, "stacks"); strings.Contains(r.stderr, "warning") {
		t.Fatalf("stacks on one backend warns:\n%s", r)
	}
}

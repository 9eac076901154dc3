//go:build unix

package e2e

import (
	"strings"
	"testing"
)

// orderYAML's services sort the other way round from their apply order:
// zeta/net goes first, app's components read it.
const orderYAML = `stack: shop
environments: {dev: {}}
services:
  zeta:
    components:
      net: {kind: Command, config: {cidr: CIDR}, command: {create: ./step.sh net, update: ./step.sh net}}
  app:
    components:
      db: {kind: Command, depends_on: [zeta/net], command: {create: ./step.sh db, update: ./step.sh db}}
      api: {kind: Command, depends_on: [db], command: {create: ./step.sh api, update: ./step.sh api}}
`

// The plan prints what applies first first, and marks an update ~ and a
// re-evaluation ?, with and without colour.
func TestPlanPrintsInApplyOrderWithDistinctMarks(t *testing.T) {
	p := newProject(t, strings.Replace(orderYAML, "CIDR", "10.0.0.0/16", 1))
	p.write("step.sh", quickStep)
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if z, a := strings.Index(r.stdout, "zeta\n  + net"), strings.Index(r.stdout, "app\n  + db (Command) create"); z < 0 || a < z {
		t.Fatalf("the first plan does not start with zeta/net, which applies first:\n%s", r)
	}

	p.write("deployer.yaml", strings.Replace(orderYAML, "CIDR", "10.1.0.0/16", 1))
	want := `zeta
  ~ net (Command) update
      ~ cidr: "10.0.0.0/16" -> "10.1.0.0/16"
app
  ? db (Command) inputs from zeta/net may change
  ? api (Command) inputs from app/db may change

Plan: 0 to create, 1 to update, 0 to replace, 0 to delete, 2 to re-evaluate, 0 unchanged.
`
	if r := p.mustRun(0, "plan", "-e", "dev"); r.stdout != want {
		t.Fatalf("plan without colour: want\n%s\ngot %s", want, r)
	}

	p.env = append(p.env, "NO_COLOR=")
	tm := p.startTerm("plan", "-e", "dev")
	code, out := tm.wait()
	for _, w := range []string{"\x1b[33m~\x1b[0m net (Command) \x1b[33mupdate", "\x1b[36m?\x1b[0m db (Command) \x1b[36minputs from zeta/net may change"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("plan on a terminal: exit %d, lacks %q:\n%q", code, w, out)
		}
	}
}

//go:build unix

package e2e

import (
	"strings"
	"testing"
)

// quickStep writes its name as its output and says what it runs.
const quickStep = `#!/bin/sh
echo "running $1 $DEPLOYER_ACTION"
[ "$DEPLOYER_ACTION" = delete ] && exit 0
printf '{"name":"%s"}' "$1" > "$DEPLOYER_OUTPUTS"
`

// On a terminal, destroy shows what it deletes, then takes only "yes" or
// the stack's name: "y" deletes nothing.
func TestDestroyAsksForYesOrTheStackName(t *testing.T) {
	p := newShop(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")

	tm := p.startTerm("destroy", "-e", "dev")
	tm.waitFor("to confirm: ")
	tm.send("y")
	code, out := tm.wait()
	prompt := "Destroy these components from shop/dev? There is no undo. Type yes or shop to confirm: "
	if code != 1 || !strings.Contains(out, "destroy cancelled: nothing was deleted (only yes or shop, typed in full, confirms a destroy)") {
		t.Fatalf("destroy answered y: exit %d\n%s", code, out)
	}
	plan, _, ok := strings.Cut(out, prompt)
	if !ok || !strings.Contains(plan, "- api (Command) delete") || !strings.Contains(plan, "3 to delete") {
		t.Fatalf("destroy did not show its plan before %q:\n%s", prompt, out)
	}
	if n := len(p.state("shop", "dev").Resources); n != 3 {
		t.Fatalf("destroy answered y left %d of 3 components", n)
	}

	tm = p.startTerm("destroy", "-e", "dev")
	tm.waitFor(prompt)
	tm.send("shop")
	if code, out := tm.wait(); code != 0 || !strings.Contains(out, "3 deleted") {
		t.Fatalf("destroy answered shop: exit %d\n%s", code, out)
	}
	if n := len(p.state("shop", "dev").Resources); n != 0 {
		t.Fatalf("destroy answered shop left %d components", n)
	}

	// Without a terminal nor --yes, nothing is asked: exit 2, as before.
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if r := p.mustRun(2, "destroy", "-e", "dev"); !strings.Contains(r.stderr, "pass --yes") {
		t.Fatalf("destroy without a terminal: %s", r)
	}
}

// destroy --all shows each stack's deletions, readers first, then asks
// once, and takes only "yes".
func TestDestroyAllShowsEachStacksPlanThenAsksOnce(t *testing.T) {
	p := &project{t: t, dir: t.TempDir()}
	p.write("step.sh", quickStep)
	const backend = "backend: {state: file://../.deployer, lock: file://../.deployer}\nenvironments: {dev: {}}\n"
	p.write("net/deployer.yaml", "stack: net\n"+backend+`services:
  base:
    components:
      vpc: {kind: Command, command: {create: sh ../step.sh vpc, delete: sh ../step.sh vpc}}
`)
	p.write("app/deployer.yaml", "stack: app\n"+backend+`services:
  up:
    components:
      net: {kind: StackReference, config: {stack: net}}
  web:
    components:
      site: {kind: Command, depends_on: [up/net], command: {create: sh ../step.sh site, delete: sh ../step.sh site}}
`)
	p.env = append(p.env, "PATH="+pathWithout(t, "pulumi"))
	p.mustRun(0, "deploy", "-e", "dev", "--all", "--yes")

	prompt := "Destroy these components from 2 stacks in dev? There is no undo. Type yes to confirm: "
	tm := p.startTerm("destroy", "-e", "dev", "--all")
	tm.waitFor(prompt)
	tm.send("app")
	code, out := tm.wait()
	if code != 1 || !strings.Contains(out, "destroy cancelled: nothing was deleted (only yes, typed in full, confirms a destroy)") {
		t.Fatalf("destroy --all answered app: exit %d\n%s", code, out)
	}
	shown, _, _ := strings.Cut(out, prompt)
	app, nt := strings.Index(shown, "=== app (app)"), strings.Index(shown, "=== net (net)")
	if app < 0 || nt < app || !strings.Contains(shown[app:nt], "- site (Command) delete") || !strings.Contains(shown[nt:], "- vpc (Command) delete") {
		t.Fatalf("destroy --all did not show app's then net's deletions before asking:\n%s", out)
	}
	if len(p.state("net", "dev").Resources) != 1 || len(p.state("app", "dev").Resources) != 2 {
		t.Fatalf("a declined destroy --all deleted something:\n%s", out)
	}

	tm = p.startTerm("destroy", "-e", "dev", "--all")
	tm.waitFor(prompt)
	tm.send("yes")
	code, out = tm.wait()
	_, after, _ := strings.Cut(out, prompt)
	if code != 0 || !strings.Contains(after, "2 stacks in dev: 2 destroyed.") || strings.Contains(after, "=== ") {
		t.Fatalf("destroy --all answered yes (plans shown once, before the prompt): exit %d\n%s", code, out)
	}
}

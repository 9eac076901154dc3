//go:build unix

package e2e

// A deploy --run-id that fails before it applies anything still records its
// outcome for the run (docs/many-stacks.md#one-job-per-stack-the-matrix), so
// that the stacks of the run waiting for it stop at once, naming it and
// why, instead of waiting out --wait-timeout.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const runFailUpYAML = `stack: up
backend: {state: file://../.deployer, lock: file://../.deployer}
%POLICY%environments: {dev: {}}
services:
  app:
    components:
      a:
        kind: Command
        %PROTECT%config: {v: "1"}
        command: {create: "true", update: "while [ -f hold ]; do sleep 0.05; done", delete: "true"}
`

const runFailDownYAML = `stack: down
backend: {state: file://../.deployer, lock: file://../.deployer}
environments: {dev: {}}
services:
  app:
    components:
      up: {kind: StackReference, config: {stack: up}}
      d:
        kind: Command
        depends_on: [app/up]
        command: {create: "true", delete: "true"}
`

// runFailUp writes up's deployer.yaml: with a policy that denies creates,
// a protected a, a component b instead of a.
func runFailUp(policy, protect, bInsteadOfA bool) string {
	r := map[string]string{"%POLICY%": "", "%PROTECT%": ""}
	if policy {
		r["%POLICY%"] = "policy: {paths: [policy/]}\n"
	}
	if protect {
		r["%PROTECT%"] = "protect: true\n        "
	}
	y := runFailUpYAML
	for k, v := range r {
		y = strings.ReplaceAll(y, k, v)
	}
	if bInsteadOfA {
		y = strings.Replace(y, "      a:\n", "      b:\n", 1)
	}
	return y
}

// TestRunIDFailureBeforeApplyIsRecordedForTheRun: a policy deny, a
// protected component the plan would delete, a policy file that does not
// compile, a missing --yes and an interrupt during the job's own wait each
// end the job of stack up with its usual exit code and a record of the run
// (failed, or cancelled) that names the reason; the job of stack down, which reads
// up, then stops at its first look (--wait-timeout 0) with exit 7, naming
// up and the reason. A held lock cannot be recorded and the job says so.
func TestRunIDFailureBeforeApplyIsRecordedForTheRun(t *testing.T) {
	root := t.TempDir()
	up := &project{t: t, dir: filepath.Join(root, "up")}
	down := &project{t: t, dir: filepath.Join(root, "down")}
	down.write("deployer.yaml", runFailDownYAML)
	deployUp := func(code int, id string, extra ...string) result {
		t.Helper()
		return up.mustRun(code, append([]string{"deploy", "-e", "dev", "--yes", "--run-id", id}, extra...)...)
	}
	// down's job looks once: a record of up's job ends it at once, and
	// without one it would report that none came.
	downSkipped := func(id string, want ...string) {
		t.Helper()
		r := down.mustRun(7, "deploy", "-e", "dev", "--yes", "--run-id", id, "--upstream", "up", "--wait-timeout", "0")
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("down's job in run %s lacks %q:\n%s", id, w, r)
			}
		}
	}

	// A policy denies the plan before the lock is taken.
	up.write("deployer.yaml", runFailUp(true, false, false))
	up.write("policy/nocreate.rego", "package deployer.nocreate\n\ndeny contains msg if {\n\tsome step in input.steps\n\tstep.action == \"create\"\n\tmsg := sprintf(\"%s: no creates today\", [step.address])\n}\n")
	r := deployUp(5, "r1")
	if !strings.Contains(r.stderr, "Recorded the failure of this deploy for run r1") {
		t.Errorf("up's denied job should say it recorded its failure for the run:\n%s", r)
	}
	downSkipped("r1", "down/dev skipped: upstream up failed (deployment dep-", "run r1 attempt 1): denied by policy: nocreate: app/a: no creates today")
	if h := up.mustRun(0, "history", "-e", "dev").stdout; !strings.Contains(h, "failed") {
		t.Errorf("up's history lacks the failed deployment of run r1:\n%s", h)
	}
	// up's state holds only that record: a StackReference reads it as no
	// state, never as a stack without outputs.
	if r := down.mustRun(1, "deploy", "-e", "dev", "--yes"); !strings.Contains(r.stderr, "nothing was deployed to it yet") || !strings.Contains(r.stderr, "deploy it first") {
		t.Errorf("a deploy of down reading up, which only recorded a failure:\n%s", r)
	}

	// A policy that does not compile: the deploy cannot be checked.
	up.write("policy/nocreate.rego", "package deployer.nocreate\n\ndeny contains msg if {\n")
	deployUp(1, "r2")
	downSkipped("r2", "down/dev skipped: upstream up failed (deployment dep-", "run r2 attempt 1): ")

	// Deployed; then a plan that would delete the protected a is refused.
	up.write("deployer.yaml", runFailUp(false, true, false))
	deployUp(0, "r3")
	up.write("deployer.yaml", runFailUp(false, true, true))
	r = deployUp(6, "r4")
	downSkipped("r4", "down/dev skipped: upstream up failed (deployment dep-", "run r4 attempt 1): ", "protect")
	up.write("deployer.yaml", runFailUp(false, false, false))

	// Interrupted while it waits for its own upstream.
	j := up.start("deploy", "-e", "dev", "--yes", "--run-id", "r5", "--upstream", "ghost", "--wait-timeout", "10m")
	eventually(t, 20*time.Second, "up's job to wait for ghost", func() bool { return strings.Contains(j.errb.String(), "Waiting for 1 upstream stack(s) of run r5") })
	if err := syscall.Kill(j.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if r = j.wait(t, 20*time.Second); r.code != 130 {
		t.Fatalf("up's interrupted job: %s", r)
	}
	downSkipped("r5", "down/dev skipped: upstream up cancelled (deployment dep-", "run r5 attempt 1): ")

	// Its lock held by another deploy of up: nothing can be written, and
	// the job says that the stacks waiting for it are not told.
	up.write("hold", "")
	up.write("deployer.yaml", strings.Replace(runFailUp(false, false, false), `v: "1"`, `v: "2"`, 1))
	holder := up.start("deploy", "-e", "dev", "--yes")
	eventually(t, 20*time.Second, "the other deploy of up to hold its lock", func() bool { return strings.Contains(holder.errb.String(), "[app/a] update") })
	r = deployUp(3, "r6", "--lock-timeout", "0")
	if !strings.Contains(r.stderr, "could not record the failure of this deploy for run r6") || !strings.Contains(r.stderr, "--wait-timeout") {
		t.Errorf("up's job with its lock held should say its failure is not recorded for the run:\n%s", r)
	}
	if err := os.Remove(filepath.Join(up.dir, "hold")); err != nil {
		t.Fatal(err)
	}
	if r = holder.wait(t, 20*time.Second); r.code != 0 {
		t.Errorf("the other deploy of up: %s", r)
	}

	// A job without --yes and without a terminal: refused, and recorded.
	up.mustRun(2, "deploy", "-e", "dev", "--run-id", "r7")
	downSkipped("r7", "down/dev skipped: upstream up failed (deployment dep-", "pass --yes")
}

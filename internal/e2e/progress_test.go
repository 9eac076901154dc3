//go:build unix

package e2e

import (
	"strings"
	"testing"
)

// waitingStep prints a line, then waits until the file "go" exists.
const waitingStep = `#!/bin/sh
echo "waiting for go"
while [ ! -e go ]; do sleep 0.1; done
echo "finished"
printf '{}' > "$DEPLOYER_OUTPUTS"
`

const waitingYAML = `stack: slow
environments: {dev: {}}
services:
  app:
    components:
      build: {kind: Command, command: {create: ./wait.sh, update: ./wait.sh}}
`

// On a terminal a running step has a line of its own, redrawn with its
// elapsed time and its last output line, and erased when it ends.
func TestRunningStepShowsALiveLineOnATerminal(t *testing.T) {
	p := newProject(t, waitingYAML)
	p.write("wait.sh", waitingStep)
	tm := p.startTerm("deploy", "-e", "dev", "--yes")
	tm.waitFor("  app/build create 1s · waiting for go")
	tm.waitFor("  app/build create 2s · waiting for go") // redrawn as time passes
	p.write("go", "")
	code, out := tm.wait()
	if code != 0 || !strings.Contains(out, "[app/build] finished") || !strings.Contains(out, "1 created") {
		t.Fatalf("deploy on a terminal: exit %d\n%q", code, out)
	}
	// The line is drawn in place ("\r\033[K") and gone before the summary.
	last := strings.LastIndex(out, "  app/build create")
	if !strings.Contains(out, "\r\x1b[K  app/build create 1s") || !strings.Contains(out[last:], "\r\x1b[KReleased lock") {
		t.Errorf("the live line is not redrawn in place, or stays after the step:\n%q", out)
	}
}

// In a log a running step says it is still running every
// DEPLOYER_PROGRESS_EVERY (30s by default), as whole lines.
func TestRunningStepSaysStillRunningInALog(t *testing.T) {
	p := newProject(t, waitingYAML)
	p.write("wait.sh", waitingStep)
	p.env = append(p.env, "DEPLOYER_PROGRESS_EVERY=1s")
	tm := p.startPiped("deploy", "-e", "dev", "--yes")
	tm.waitFor("[app/build] create still running (1s)\n")
	tm.waitFor("[app/build] create still running (2s)\n")
	p.write("go", "")
	code, out := tm.wait()
	if code != 0 || !strings.Contains(out, "[app/build] finished") {
		t.Fatalf("deploy in a pipe: exit %d\n%s", code, out)
	}
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("a log got terminal control characters:\n%q", out)
	}
}

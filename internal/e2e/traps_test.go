//go:build unix

package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `deployer deploy | head -1`: a reader that goes away never stops a deploy
// between its apply and its state write. The deploy completes, saves the
// state, releases the lock and exits 0, not 141 with a held lock.
func TestClosedPipeDoesNotStrandTheLock(t *testing.T) {
	p := newShop(t)
	cmd := p.command("deploy", "-e", "dev", "--yes")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before the first byte
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Run()
	w.Close()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("deploy with a closed stdout/stderr exited %d (%v), want 0", ee.ExitCode(), ee)
	} else if err != nil {
		t.Fatal(err)
	}
	if st := p.state("shop", "dev"); st.Serial != 1 || len(st.Resources) != 3 {
		t.Fatalf("state after the deploy: serial %d, %d resources; want 1 and 3", st.Serial, len(st.Resources))
	}
	if locks := p.locks(); len(locks) != 0 {
		t.Fatalf("the lock was left held: %+v", locks)
	}
}

// Read-only commands write nothing; outside a project they say where to run.
func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	empty := newProject(t, "")
	os.Remove(filepath.Join(empty.dir, "deployer.yaml"))
	r := empty.mustRun(1, "state", "locks")
	if !strings.Contains(r.stderr, "no deployer.yaml in "+empty.dir) || strings.Contains(r.stdout, "No locks held") {
		t.Errorf("state locks outside a project should fail and say where to run it: %s", r)
	}
	empty.mustRun(1, "history", "-e", "dev")
	p := newShop(t)
	p.mustRun(0, "plan", "-e", "dev")
	p.mustRun(0, "state", "locks")
	p.mustRun(1, "history", "-e", "dev")
	p.mustRun(1, "state", "show", "-e", "dev")
	p.mustRun(0, "version")
	for _, dir := range []string{empty.dir, p.dir} {
		if _, err := os.Stat(filepath.Join(dir, ".deployer")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("read-only commands created %s/.deployer (stat: %v)", dir, err)
		}
	}
}

// On a terminal that answers no colour query (script(1) here), deployer
// never asks one: nothing but the version reaches the terminal.
func TestNoTerminalQueryOnATerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("script(1) (util-linux) is needed in CI")
		}
		t.Skip("script(1) not installed (outside CI only: CI fails above)")
	}
	cmd := exec.Command(script, "-q", "-c", bin+" version", "/dev/null")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	cmd.Stdin = bytes.NewReader(nil)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("script -c 'deployer version': %v\n%q", err, out)
	}
	if bytes.Contains(out, []byte("\x1b]")) || bytes.Contains(out, []byte("\x1b[6n")) {
		t.Errorf("deployer queried the terminal: %q", out)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(out), []byte("deployer ")) {
		t.Errorf("output = %q, want the version", out)
	}
}

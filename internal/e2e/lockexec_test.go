//go:build unix

package e2e

// `deployer lock exec` on every lock backend: the nightly-sync
// pattern (one runs, the other skips naming the holder), a broken
// lease stopping the command with SIGTERM, and locking turned off.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// execHeartbeat is the heartbeat interval of the lock exec projects; the TTL
// is long, so only a heartbeat can notice a broken lease in time.
const execHeartbeat = 500 * time.Millisecond

// trapScript marks its start, and on SIGTERM writes term.marker and exits.
const trapScript = `#!/bin/sh
trap 'echo term > term.marker; exit 143' TERM
echo started > started.marker
while :; do sleep 0.05; done
`

func lockExecProject(t *testing.T, r *remote) *project {
	t.Helper()
	p := newProject(t, "stack: shop\n"+r.backendYAML("30s", execHeartbeat.String(), "10s")+quickstartBody)
	p.env = append(p.env, r.env...)
	p.write("trap.sh", trapScript)
	return p
}

func exists(p *project, name string) bool {
	_, err := os.Stat(filepath.Join(p.dir, name))
	return err == nil
}

func TestLockExecOnEveryLockBackend(t *testing.T) {
	for _, kind := range []string{"file", "dynamodb", "s3", "redis", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			r := newRemote(t, kind, "file", "", true)
			p := lockExecProject(t, r)
			t.Run("second skips naming the holder", func(t *testing.T) { skipIfLocked(t, p) })
			t.Run("exit code passes through", func(t *testing.T) {
				if res := p.run("lock", "exec", "--key", "nightly-sync", "--", "sh", "-c", "exit 7"); res.code != 7 {
					t.Errorf("lock exec -- sh -c 'exit 7': want exit 7, got %s", res)
				}
			})
			t.Run("unlock --force stops the command", func(t *testing.T) { forceUnlockStopsCommand(t, p) })
		})
	}
}

// skipIfLocked starts two `lock exec --skip-if-locked -- sleep 3` together:
// one must run the 3 s, the other exit 0 while the first still runs, naming it.
func skipIfLocked(t *testing.T, p *project) {
	args := []string{"lock", "exec", "--key", "nightly-sync", "--skip-if-locked", "--", "sleep", "3"}
	began := time.Now()
	a, b := p.start(args...), p.start(args...)
	var skipper, runner *bgRun
	select {
	case <-a.done:
		skipper, runner = a, b
	case <-b.done:
		skipper, runner = b, a
	case <-time.After(30 * time.Second):
		t.Fatal("neither lock exec finished within 30s")
	}
	skipped := time.Since(began)
	select {
	case <-runner.done:
		t.Fatalf("both lock execs finished at once: one should run sleep 3 while the other skips\nfirst: %s\nsecond: %s", skipper.res, runner.res)
	default:
	}
	res := skipper.res
	holder := fmt.Sprintf("pid %d", runner.cmd.Process.Pid)
	if res.code != 0 || !strings.Contains(res.stderr, "held by") || !strings.Contains(res.stderr, holder) || !strings.Contains(res.stderr, "custom:nightly-sync") {
		t.Errorf("the skipped lock exec should exit 0 naming the holder (%s) of custom:nightly-sync: %s", holder, res)
	}
	res = runner.wait(t, 30*time.Second)
	ran := time.Since(began)
	if res.code != 0 || strings.Contains(res.stderr, "held by") {
		t.Errorf("the lock exec that got the lock should run sleep 3 and exit 0: %s", res)
	}
	if ran < 3*time.Second {
		t.Errorf("the running lock exec finished after %s, before its sleep 3 could", ran)
	}
	t.Logf("skipped after %s, ran for %s", skipped.Round(time.Millisecond), ran.Round(time.Millisecond))
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("locks left after lock exec: %+v", locks)
	}
}

// forceUnlockStopsCommand breaks the lease of a running lock exec: its
// command gets SIGTERM within a heartbeat interval (plus slack for process
// start-up and the backend round trip), and lock exec exits 3.
func forceUnlockStopsCommand(t *testing.T, p *project) {
	for _, m := range []string{"started.marker", "term.marker"} {
		os.Remove(filepath.Join(p.dir, m))
	}
	x := p.start("lock", "exec", "--key", "nightly-sync", "--", "./trap.sh")
	eventually(t, 30*time.Second, "the command under lock exec to start", func() bool { return exists(p, "started.marker") })

	r := p.mustRun(0, "state", "locks", "--json")
	var out struct {
		Locks []struct {
			lockRow
			Metadata struct {
				Operation string `json:"operation"`
				Command   string `json:"command"`
				PID       int    `json:"pid"`
			} `json:"metadata"`
		} `json:"locks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Locks) != 1 {
		t.Fatalf("state locks --json should list the lock exec lock: %v\n%s", err, r)
	}
	l := out.Locks[0]
	if l.LockKey != "custom:nightly-sync" || l.Level != "custom" || l.Status != "ACTIVE" || l.Metadata.Operation != "exec" ||
		l.Metadata.Command != "./trap.sh" || l.Metadata.PID != x.cmd.Process.Pid {
		t.Errorf("state locks --json: %+v, want ACTIVE custom:nightly-sync, level custom, operation exec, command ./trap.sh, pid %d", l, x.cmd.Process.Pid)
	}
	if r := p.mustRun(0, "state", "locks"); !strings.Contains(r.stdout, "custom:nightly-sync") {
		t.Errorf("state locks should show the custom lock:\n%s", r)
	}

	r = p.mustRun(2, "unlock", "--key", "nightly-sync", "--force", "--yes")
	if !strings.Contains(r.stderr, "--lock-id "+l.LockID) {
		t.Errorf("unlock of an ACTIVE lock without --lock-id should refuse naming the id %s: %s", l.LockID, r)
	}
	if exists(p, "term.marker") {
		t.Fatal("the refused unlock stopped the command")
	}
	p.mustRun(0, "unlock", "--key", "nightly-sync", "--force", "--lock-id", l.LockID, "--yes")
	broken := time.Now()
	eventually(t, execHeartbeat+2*time.Second, "the command to receive SIGTERM", func() bool { return exists(p, "term.marker") })
	t.Logf("SIGTERM %s after unlock --force returned (heartbeat interval %s)", time.Since(broken).Round(time.Millisecond), execHeartbeat)
	res := x.wait(t, 30*time.Second)
	if res.code != 3 || !strings.Contains(res.stderr, "lost") {
		t.Errorf("lock exec whose lease was broken: want exit 3 saying the lock was lost, got %s", res)
	}
}

func TestLockNoneWarnsAndListsNothing(t *testing.T) {
	r := newRemote(t, "none", "file", "", false)
	p := lockExecProject(t, r)
	res := p.mustRun(0, "lock", "exec", "--key", "nightly-sync", "--", "sh", "-c", "echo ran >> ran.log")
	if !strings.Contains(res.stderr, "locking is off") || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 {
		t.Errorf("lock exec with lock: none should print one warning line on stderr: %s", res)
	}
	// Nothing is locked: a second holder runs alongside the first.
	p.write("step.sh", gateStep)
	p.write("hold", "")
	a := p.start("lock", "exec", "--key", "nightly-sync", "--skip-if-locked", "--", "./step.sh", "a")
	eventually(t, 30*time.Second, "the first holder to start", func() bool { return len(p.events("start")) == 1 })
	b := p.mustRun(0, "lock", "exec", "--key", "nightly-sync", "--skip-if-locked", "--", "sh", "-c", "echo ran >> ran.log")
	if strings.Contains(b.stderr, "skipped") || strings.Count(string(p.read("ran.log")), "ran") != 2 {
		t.Errorf("with lock: none a second lock exec should run alongside the first: %s", b)
	}
	os.Remove(filepath.Join(p.dir, "hold"))
	if res := a.wait(t, 30*time.Second); res.code != 0 {
		t.Errorf("first holder: %s", res)
	}

	res = p.mustRun(0, "state", "locks")
	if !strings.Contains(res.stdout, "Locking is off") {
		t.Errorf("state locks with lock: none should say locking is off: %s", res)
	}
	if !strings.Contains(res.stderr, "locking is off") {
		t.Errorf("state locks with lock: none should print the warning on stderr like every command: %s", res)
	}
	res = p.mustRun(0, "state", "locks", "--json")
	var out struct {
		Enabled *bool `json:"locking_enabled"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.Enabled == nil || *out.Enabled {
		t.Errorf("state locks --json with lock: none should say locking_enabled false: %v\n%s", err, res)
	}
	res = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(res.stderr, "locking is off") {
		t.Errorf("deploy with lock: none should warn on stderr: %s", res)
	}
}

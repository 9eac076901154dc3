//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// auditEvents reads the audit log's JSON lines.
func auditEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

func eventNames(evs []map[string]any) []string {
	var names []string
	for _, e := range evs {
		names = append(names, e["event"].(string))
	}
	return names
}

func TestSIGINTCancelsRecordsAndReleases(t *testing.T) {
	p := newShop(t)
	audit := filepath.Join(p.dir, "audit.jsonl")
	p.mustRun(0, "deploy", "-e", "dev", "--yes", "--audit-log", audit)
	for _, want := range []string{"lock.acquired", "deploy.started", "state.saved", "deploy.finished", "lock.released"} {
		if !strings.Contains(strings.Join(eventNames(auditEvents(t, audit)), ","), want) {
			t.Errorf("audit log lacks %s: %v", want, eventNames(auditEvents(t, audit)))
		}
	}
	for _, e := range auditEvents(t, audit) {
		if e["event"] == "lock.released" {
			if _, ok := e["duration_seconds"].(float64); !ok || e["lock_key"] != "stack:shop:env:dev" || e["timestamp"] == nil {
				t.Errorf("lock.released event lacks the audit log's fields: %v", e)
			}
		}
	}

	p.write("deployer.yaml", strings.NewReplacer("size: small", "size: large", "replicas: 2", "replicas: 3").Replace(shopYAML))
	p.write("slow", "")
	os.Remove(filepath.Join(p.dir, "events.log"))
	d := p.start("deploy", "-e", "dev", "--yes", "--audit-log", audit)
	eventually(t, 20*time.Second, "app/db to start", func() bool { return len(p.events("start")) > 0 })
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := d.wait(t, 10*time.Second)
	if r.code != 130 {
		t.Fatalf("a cancelled deploy exits 130: %s", r)
	}
	// One plain sentence: what was cancelled, that what finished is saved,
	// and which step stopped; no "cancelled: ... cancelled: context canceled".
	if want := `Error: deploy cancelled; what finished is saved in the state: component app/db: update command "./step.sh db 30" stopped` + "\n"; !strings.HasSuffix(r.stderr, want) ||
		strings.Count(r.stderr, "cancelled") > 3 || strings.Contains(r.stderr, "context canceled") {
		t.Errorf("the cancelled deploy's error should end with %q, without repeating itself:\n%s", want, r.stderr)
	}
	if len(p.locks()) != 0 {
		t.Fatal("the cancelled deploy left its lock")
	}
	st := p.state("shop", "dev")
	if st.Serial != 2 || st.DeploymentHistory[0].Status != "cancelled" {
		t.Fatalf("the cancelled deployment should be recorded as serial 2: serial %d, history %+v", st.Serial, st.DeploymentHistory)
	}
	if st.Resources["app/db"].DesiredConfig["size"] != "small" {
		t.Errorf("the interrupted component must keep its previous config so the next plan retries it: %v", st.Resources["app/db"].DesiredConfig)
	}
	os.Remove(filepath.Join(p.dir, "slow"))
	r = p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "~ db") || !strings.Contains(r.stdout, "~ api") {
		t.Errorf("after a cancel the plan should still update db and api:\n%s", r)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
}

func TestFailedComponentStopsDependentsAndRecordsWhatSucceeded(t *testing.T) {
	p := newShop(t)
	p.write("deployer.yaml", strings.Replace(shopYAML, "./step.sh db 30, update", "exit 7, update", 1))
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "app/db") || !strings.Contains(r.stderr, "7") {
		t.Errorf("the error should name the component and the exit code: %s", r)
	}
	st := p.state("shop", "dev")
	if _, ok := st.Resources["base/net"]; !ok || len(st.Resources) != 1 || st.DeploymentHistory[0].Status != "failed" {
		t.Fatalf("state should record base/net and a failed deployment: %+v", st)
	}
	if got := strings.Join(p.events("start"), ","); got != "net" {
		t.Errorf("components started: %s; app/api depends on the failed app/db and must not run", got)
	}
	if len(p.locks()) != 0 {
		t.Error("lock left behind after a failed deploy")
	}
}

// The second Ctrl-C kills a running Command component at once, with what
// it started in a session of its own: the first SIGINT's SIGTERM is
// ignored here, and the SIGKILL that ends the grace period reaches the
// command's process group only, so only the second Ctrl-C's kill ends the
// child. The component is recorded as cancelled and the lock released.
func TestDoubleCtrlCKillsCommandComponentsAtOnce(t *testing.T) {
	p := newProject(t, `stack: stuck
environments: {dev: {}}
services:
  app:
    components:
      job:
        kind: Command
        command:
          create: trap '' TERM; setsid sleep 60 & echo $! > child.pid; touch started; wait; touch finished
`)
	d := p.start("deploy", "-e", "dev", "--yes")
	eventually(t, 20*time.Second, "app/job to start", func() bool {
		_, err := os.Stat(filepath.Join(p.dir, "started"))
		return err == nil
	})
	child, err := strconv.Atoi(strings.TrimSpace(string(p.read("child.pid"))))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the first Ctrl-C to be taken", func() bool {
		return strings.Contains(d.errb.String(), "signal again to stop at once")
	})
	if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := d.wait(t, 30*time.Second)
	if r.code != 130 {
		t.Fatalf("a deploy stopped by Ctrl-C twice exits 130: %s", r)
	}
	eventually(t, 20*time.Second, "the command's child to die", func() bool { return !alive(child) })
	if _, err := os.Stat(filepath.Join(p.dir, "finished")); err == nil {
		t.Error("the command ran to its end after the second Ctrl-C")
	}
	if len(p.locks()) != 0 {
		t.Error("the killed deploy left its lock")
	}
	if st := p.state("stuck", "dev"); st.DeploymentHistory[0].Status != "cancelled" {
		t.Errorf("the killed deployment should be recorded as cancelled: %+v", st.DeploymentHistory)
	}
	if !strings.Contains(r.stderr, `component app/job: create command`) {
		t.Errorf("the error should name the stopped component:\n%s", r.stderr)
	}
}

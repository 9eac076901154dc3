//go:build unix

package e2e

// Lost replies between deployer and its self-hosted backends, Redis and
// PostgreSQL (docs/locking.md, "Lost replies"), through a TCP proxy that lets
// the server run a command and drops its reply with the connection.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/faulttest"
)

// selfhostedProject is the quickstart on r with a lease long enough that no
// heartbeat runs during a test, so the only lock traffic is the acquire and
// the release the faults aim at.
func selfhostedProject(t *testing.T, r *remote) *project {
	t.Helper()
	p := newProject(t, "stack: shop\n"+r.backendYAML("10m", "3m", "20m")+quickstartBody)
	p.env = append(p.env, r.env...)
	p.write("step.sh", gateStep)
	return p
}

// lockExecThroughLostTCPReplies runs `lock exec` with the reply of its
// acquire dropped by proxy (armAcquire, armed before it starts) and the reply
// of its release dropped (armRelease, armed while the command runs): the
// command runs once, `lock exec` exits 0, and no lock is left behind.
func lockExecThroughLostTCPReplies(t *testing.T, p *project, proxy *faulttest.TCPDropper, armAcquire, armRelease func()) {
	t.Helper()
	armAcquire()
	p.write("gate", "")
	audit := filepath.Join(p.dir, "audit.jsonl")
	run := p.start("lock", "exec", "--audit-log", audit, "--key", "lost-reply", "--", "./step.sh", "inside", "gate")
	eventually(t, 5*time.Minute, "the command to start under the lock", func() bool { return len(p.events("start")) == 1 })
	if n := proxy.Armed(); n != 0 {
		t.Errorf("the acquire fault never fired (%d dropped)", proxy.Dropped())
	}
	armRelease()
	if err := os.Remove(filepath.Join(p.dir, "gate")); err != nil {
		t.Fatal(err)
	}
	res := run.wait(t, 5*time.Minute) // only turns a hang into a failure
	if res.code != 0 {
		t.Errorf("lock exec with its acquire and release replies lost: want exit 0, got %s", res)
	}
	if starts := p.events("start"); len(starts) != 1 {
		t.Errorf("the command ran %d times, want once: %v", len(starts), starts)
	}
	if n := proxy.Armed(); n != 0 {
		t.Errorf("%d faults never fired (%d dropped)", n, proxy.Dropped())
	}
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("locks left behind: %+v", locks)
	}
	// lock exec's exit status does not depend on its release; the audit
	// log says whether the release was recognised as ours.
	released := 0
	for _, e := range auditEvents(t, audit) {
		if e["event"] == "lock.released" {
			released++
			if e["error"] != nil {
				t.Errorf("release with its reply lost was not recognised as ours: %v", e)
			}
		}
	}
	if released != 1 {
		t.Errorf("%d lock.released events in the audit log, want 1", released)
	}
}

func TestLockExecWithLostRepliesOnRedis(t *testing.T) {
	r := newRemote(t, "redis", "file", "", true)
	// A first run loads the scripts into Redis, so that the EVALSHA whose
	// reply is dropped below is one Redis ran (not a NOSCRIPT refusal).
	warm := selfhostedProject(t, r)
	warm.mustRun(0, "lock", "exec", "--key", "warm-up", "--", "true")

	var proxy *faulttest.TCPDropper
	r.lock, proxy = faulttest.ViaTCP(t, r.lock)
	p := selfhostedProject(t, r)
	lockExecThroughLostTCPReplies(t, p, proxy,
		func() { proxy.DropNext(`"fence":`) },    // only the acquire script carries the record
		func() { proxy.DropNext(":released:{") }) // only the release script writes a receipt
}

func TestLockExecWithLostRepliesOnPostgres(t *testing.T) {
	r := newRemote(t, "postgres", "postgres", "", true)
	var proxy *faulttest.TCPDropper
	r.lock, proxy = faulttest.ViaTCP(t, r.lock)
	r.state = r.lock
	p := selfhostedProject(t, r)
	lockExecThroughLostTCPReplies(t, p, proxy,
		// The INSERT ... ON CONFLICT's parameters are the only ones that
		// carry the record's metadata.
		func() { proxy.DropNext(`"operation":"exec"`) },
		// With no heartbeat, the next statement naming the key is the
		// release's UPDATE.
		func() { proxy.DropNext("custom:lost-reply") })
}

// A deploy on PostgreSQL (lock and state) whose acquire and state COMMIT
// replies are lost (PostgreSQL applied them) exits 0, writes its
// state once, leaves no errored state file nor lock, and `history` shows the
// deployment committed.
func TestDeployWithLostRepliesOnPostgres(t *testing.T) {
	r := newRemote(t, "postgres", "postgres", "", true)
	var proxy *faulttest.TCPDropper
	r.lock, proxy = faulttest.ViaTCP(t, r.lock)
	r.state = r.lock
	p := selfhostedProject(t, r)
	proxy.DropNext(`"operation":"deploy"`) // the acquire's INSERT ... ON CONFLICT
	proxy.DropNext("commit\x00")           // the state save's transaction
	res := p.run("deploy", "-e", "dev", "--yes")
	if res.code != 0 {
		t.Fatalf("deploy with its lock and state replies lost: %s", res)
	}
	if n := proxy.Armed(); n != 0 {
		t.Errorf("%d faults never fired (%d dropped)", n, proxy.Dropped())
	}
	if matches, _ := filepath.Glob(filepath.Join(p.dir, "deployer-errored-*.json")); len(matches) != 0 {
		t.Errorf("errored state files written: %v", matches)
	}
	if st := p.remoteState("dev"); st.Serial != 1 {
		t.Errorf("state serial %d, want 1", st.Serial)
	}
	var rows []historyRow
	out := p.mustRun(0, "history", "-e", "dev", "--json")
	if err := json.Unmarshal([]byte(out.stdout), &rows); err != nil {
		t.Fatalf("history --json: %v\n%s", err, out)
	}
	if len(rows) != 1 || rows[0].Serial != 1 || rows[0].Uncommitted || rows[0].Status != "success" {
		t.Errorf("history after the deploy = %+v, want serial 1 committed, success", rows)
	}
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("locks left behind: %+v", locks)
	}
}

//go:build unix

package e2e

// Faults between deployer and its backends (docs/locking.md, "Lost replies"):
// concurrent `backend init`, and lost replies through a proxy that lets the
// server apply a write and drops its reply.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/faulttest"
)

// Eight `deployer backend init` at once on a fresh PostgreSQL schema, as a CI
// matrix starts them: all exit 0, exactly one applies the migration, the
// others say the schema is up to date; none reports a dirty schema.
func TestConcurrentBackendInitOnPostgres(t *testing.T) {
	r := newRemote(t, "postgres", "postgres", "", false)
	p := r.quickstart(t)
	const n = 8
	runs := make([]*bgRun, n)
	for i := range runs {
		runs[i] = p.start("backend", "init")
	}
	applied, current := 0, 0
	for i, b := range runs {
		res := b.wait(t, 5*time.Minute) // only turns a hang into a failure
		if res.code != 0 {
			t.Errorf("backend init %d: %s", i, res)
			continue
		}
		out := res.stdout + res.stderr
		switch {
		case strings.Contains(out, "applied migration 000001_init"):
			applied++
		case strings.Contains(out, "schema already up to date"):
			current++
		default:
			t.Errorf("backend init %d says neither applied nor up to date: %s", i, res)
		}
	}
	if applied != 1 || current != n-1 {
		t.Errorf("%d applied the migration and %d found the schema up to date; want 1 and %d", applied, current, n-1)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
}

// lockExecThroughLostReplies runs `lock exec` with the replies of its acquire
// and its release dropped by proxy (the server applied both): it runs its
// command once, exits 0, and leaves no lock behind.
func lockExecThroughLostReplies(t *testing.T, r *remote, endpointVar string, upstream string, arm func(*faulttest.ReplyDropper)) {
	proxy := faulttest.NewReplyDropper(t, upstream)
	p := r.quickstart(t)
	p.env = append(p.env, endpointVar+"="+proxy.URL)
	arm(proxy)
	res := p.run("lock", "exec", "--key", "lost-reply", "--", "echo", "INSIDE")
	if res.code != 0 || strings.Count(res.stdout, "INSIDE") != 1 {
		t.Errorf("lock exec with its acquire and release replies lost: want exit 0 and INSIDE once, got %s", res)
	}
	if n := proxy.Armed(); n != 0 {
		t.Errorf("%d faults never fired; dropped %v", n, proxy.Dropped())
	}
	t.Logf("dropped replies: %v", proxy.Dropped())
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("locks left behind: %+v", locks)
	}
}

func TestLockExecWithLostRepliesOnDynamoDB(t *testing.T) {
	r := newRemote(t, "dynamodb", "s3", "", true)
	lockExecThroughLostReplies(t, r, "AWS_ENDPOINT_URL_DYNAMODB", endpointOf(r.env, "AWS_ENDPOINT_URL_DYNAMODB"), func(d *faulttest.ReplyDropper) {
		d.DropNext(faulttest.DynamoDB("UpdateItem", "ADD fence"))
		d.DropNext(faulttest.DynamoDB("UpdateItem", "REMOVE lockId"))
	})
}

func TestLockExecWithLostRepliesOnS3(t *testing.T) {
	r := newRemote(t, "s3", "s3", "", true)
	lockExecThroughLostReplies(t, r, "AWS_ENDPOINT_URL_S3", endpointOf(r.env, "AWS_ENDPOINT_URL_S3"), func(d *faulttest.ReplyDropper) {
		d.DropNext(faulttest.S3Put("/locks/"))
		d.DropNext(faulttest.S3Put("/locks/", `"released":true`))
	})
}

// A deploy whose history snapshot PUT and state.json PUT replies are both
// lost (MinIO applied them) exits 0, writes its state once, leaves no errored
// state file, and `history` shows the deployment committed.
func TestDeployWithLostStateRepliesOnS3(t *testing.T) {
	r := newRemote(t, "file", "s3", "", true)
	proxy := faulttest.NewReplyDropper(t, endpointOf(r.env, "AWS_ENDPOINT_URL_S3"))
	p := r.quickstart(t)
	p.env = append(p.env, "AWS_ENDPOINT_URL_S3="+proxy.URL)
	proxy.DropNext(faulttest.S3Put("/history/"))
	proxy.DropNext(faulttest.S3Put("/state.json"))
	res := p.run("deploy", "-e", "dev", "--yes")
	if res.code != 0 {
		t.Fatalf("deploy with its state replies lost: %s", res)
	}
	if n := proxy.Armed(); n != 0 {
		t.Errorf("%d faults never fired; dropped %v", n, proxy.Dropped())
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
}

// endpointOf returns the value of name in env ("NAME=value" entries).
func endpointOf(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// A deploy cut off from its DynamoDB lock table while it applies stops (exit
// 4) without writing state; a second deploy waiting with --lock-timeout takes
// the lock only once the first's lease expired, and the state continues at
// the next serial (docs/locking.md, "Partitions").
func TestPartitionDuringDeploy(t *testing.T) {
	r := newRemote(t, "dynamodb", "s3", "", true)
	direct := endpointOf(r.env, "AWS_ENDPOINT_URL_DYNAMODB")
	proxy := faulttest.NewReplyDropper(t, direct)
	p := newProject(t, pauseConfig(r, "base", "no-gate"))
	p.env = append(append(p.env, r.env...), "AWS_ENDPOINT_URL_DYNAMODB="+proxy.URL)
	p.write("step.sh", gateStep)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("first.yaml", pauseConfig(r, "first", "gate"))
	p.write("gate", "")
	defer os.Remove(filepath.Join(p.dir, "gate"))

	first := p.start("deploy", "--config", "first.yaml", "-e", "dev", "--yes")
	eventually(t, time.Minute, "the first deploy to start app/api", func() bool { return len(p.events("start")) == 2 })
	proxy.Partition(true)
	defer proxy.Partition(false)

	// The second deploy is another runner: its own checkout (the cut-off
	// deploy's errored state file stays on its own runner), reaching
	// DynamoDB directly.
	q := newProject(t, pauseConfig(r, "second", "no-gate"))
	q.env = append(append(q.env, r.env...), "AWS_ENDPOINT_URL_DYNAMODB="+direct)
	q.write("step.sh", gateStep)
	second := q.start("deploy", "-e", "dev", "--yes", "--lock-timeout", "2m")

	res := first.wait(t, 5*time.Minute)
	if res.code != 4 {
		t.Errorf("cut-off deploy: want exit 4 (lease lost, state not written), got %s", res)
	}
	t.Logf("cut-off deploy: exit %d: %s", res.code, errorLine(res.stderr))
	res2 := second.wait(t, 5*time.Minute)
	if res2.code != 0 {
		t.Fatalf("second deploy: %s", res2)
	}
	if !strings.Contains(res2.stderr, "waiting for lock stack:shop:env:dev") {
		t.Errorf("the second deploy should have waited for the cut-off holder's lease to expire:\n%s", res2)
	}
	st := p.remoteState("dev")
	// Serial 2 records the cut-off deploy as abandoned (its lease expired
	// and was taken over: docs/design.md#abandoned-deployments); serial 3
	// is the second deploy's.
	if st.Serial != 3 || st.Resources["app/api"].DesiredConfig["value"] != "second" {
		t.Errorf("after the partition: serial %d, config %v; want serial 3 written by the second deploy", st.Serial, st.Resources["app/api"].DesiredConfig)
	}
	if ab := p.abandonedIn("dev"); len(ab) != 1 || ab[0].Serial != 2 {
		t.Errorf("history should show the cut-off deploy as abandoned at serial 2: %+v", ab)
	}
	proxy.Partition(false)
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("locks left: %+v", locks)
	}
}

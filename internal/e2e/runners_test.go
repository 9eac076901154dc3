//go:build unix

package e2e

// Many stacks across CI jobs (docs/many-stacks.md#one-job-per-stack-the-matrix):
// `stacks --matrix` and `deploy --run-id`, through the built binary, on the
// diamond of stacks_test.go.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/testenv"
)

type matrixEntry struct {
	Stack    string   `json:"stack"`
	Dir      string   `json:"dir"`
	Upstream []string `json:"upstream"`
}

// matrix runs stacks --matrix ARGS... and returns its entries.
func (r *stackRepo) matrix(args ...string) []matrixEntry {
	r.t.Helper()
	res := r.mustRun(0, append([]string{"stacks", "-e", "dev", "--matrix"}, args...)...)
	var m struct {
		Include []matrixEntry `json:"include"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &m); err != nil {
		r.t.Fatalf("stacks --matrix: %v\n%s", err, res)
	}
	return m.Include
}

func matrixText(m []matrixEntry) string {
	var parts []string
	for _, e := range m {
		parts = append(parts, e.Stack+"("+e.Dir+")<-["+strings.Join(e.Upstream, " ")+"]")
	}
	return strings.Join(parts, " ")
}

func TestStacksMatrixThroughTheBinary(t *testing.T) {
	_, err := exec.LookPath("git")
	testenv.RequirePlatform(t, err == nil, "git is not installed")
	r := newStackRepo(t, "backend: {state: file://../.deployer, lock: file://../.deployer}\n")
	if got, want := matrixText(r.matrix()), "alone(alone)<-[] root(root)<-[] left(left)<-[root] right(right)<-[root] leaf(leaf)<-[root left right]"; got != want {
		t.Errorf("matrix:\n got %s\nwant %s", got, want)
	}
	r.write(".gitignore", ".deployer/\nevents.log\nstarted-*\n")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.email=e2e@example.com", "-c", "user.name=e2e"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "stacks")
	res := r.mustRun(0, "stacks", "-e", "dev", "--matrix", "--changed-since", "HEAD")
	if strings.TrimSpace(res.stdout) != `{"include":[]}` || !strings.Contains(res.stderr, "No stack changed since HEAD.") {
		t.Errorf("nothing changed: %s", res)
	}
	r.version["left"] = "2"
	r.writeStack("left")
	// root is not in the run: left and leaf do not wait for it.
	if got, want := matrixText(r.matrix("--changed-since", "HEAD")), "left(left)<-[] leaf(leaf)<-[left]"; got != want {
		t.Errorf("matrix of a change to left:\n got %s\nwant %s", got, want)
	}
	res = r.mustRun(2, "stacks", "--matrix")
	if !strings.Contains(res.stderr, "--matrix needs -e ENV") || res.stdout != "" {
		t.Errorf("without -e: %s", res)
	}
}

// runMatrix starts one `deploy --run-id ID` per entry of m at once, each in
// its stack's directory with the entry's upstream, as the matrix jobs of
// one CI run attempt do, and returns each job's result by stack.
func (r *stackRepo) runMatrix(m []matrixEntry, id string, attempt int, extra ...string) map[string]result {
	r.t.Helper()
	jobs := map[string]*bgRun{}
	for _, e := range m {
		p := &project{t: r.t, dir: filepath.Join(r.dir, e.Dir), env: r.env}
		args := []string{"deploy", "-e", "dev", "--yes", "--run-id", id, "--run-attempt", strconv.Itoa(attempt),
			"--upstream", strings.Join(e.Upstream, ","), "--wait-timeout", "3m"}
		jobs[e.Stack] = p.start(append(args, extra...)...)
	}
	out := map[string]result{}
	for name, j := range jobs {
		out[name] = j.wait(r.t, 5*time.Minute)
	}
	return out
}

// codes is "stack=exit" of every job, in the diamond's order.
func codes(res map[string]result) string {
	var parts []string
	for _, n := range []string{"alone", "root", "left", "right", "leaf"} {
		if r, ok := res[n]; ok {
			parts = append(parts, n+"="+strconv.Itoa(r.code))
		}
	}
	return strings.Join(parts, " ")
}

// runIDScenario is the acceptance run of deploy --run-id
// (docs/many-stacks.md#one-job-per-stack-the-matrix) on one pair of backends: five
// jobs started at once deploy the diamond in order; the same run again
// writes nothing; a run whose root fails skips exactly root's consumers
// (exit 7); its failed jobs re-run as attempt 2 finish the run.
func runIDScenario(t *testing.T, backend string, env ...string) {
	r := newStackRepo(t, backend, env...)
	m := r.matrix()
	r.write("barrier", "")
	res := r.runMatrix(m, "100", 1)
	if got := codes(res); got != "alone=0 root=0 left=0 right=0 leaf=0" {
		t.Fatalf("run 100: %s\nleaf: %s", got, res["leaf"])
	}
	r.checkDiamondTimeline()
	for _, want := range []string{"Waiting for 3 upstream stack(s) of run 100 (attempt 1, up to 3m0s): root, left, right",
		"Upstream root: success (deployment dep-", "Upstream left: success", "Upstream right: success"} {
		if !strings.Contains(res["leaf"].stderr, want) {
			t.Errorf("leaf's log lacks %q:\n%s", want, res["leaf"])
		}
	}
	if v := r.leafVersion(); v != "leaf-1(left-1(root-1()) right-1(root-1()))" {
		t.Errorf("leaf read %q", v)
	}

	// The whole run again (GitHub's "re-run all jobs"): nothing to do.
	r.resetEvents()
	res = r.runMatrix(m, "100", 2)
	if got := codes(res); got != "alone=0 root=0 left=0 right=0 leaf=0" {
		t.Fatalf("run 100 again: %s", got)
	}
	for name, j := range res {
		if !strings.Contains(j.stdout, "was already deployed in this run and nothing changed since: nothing written.") {
			t.Errorf("%s in run 100 again:\n%s", name, j)
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, "events.log")); err == nil {
		t.Errorf("a component ran again in run 100:\n%s", r.read("events.log"))
	}

	// Run 101: root changes and fails; alone has nothing to change.
	r.fail["root"], r.version["root"] = true, "2"
	r.writeStack("root")
	res = r.runMatrix(m, "101", 1)
	if got := codes(res); got != "alone=0 root=1 left=7 right=7 leaf=7" {
		t.Fatalf("run 101: %s\nleft: %s", got, res["left"])
	}
	if want := "left/dev skipped: upstream root failed (deployment dep-"; !strings.Contains(res["left"].stdout, want) {
		t.Errorf("left's output lacks %q:\n%s", want, res["left"])
	}
	if want := "No changes; deployment dep-"; !strings.Contains(res["alone"].stdout, want) {
		t.Errorf("alone's output lacks %q:\n%s", want, res["alone"])
	}
	ran := r.intervals()
	if len(ran["left"])+len(ran["right"])+len(ran["leaf"]) != 0 {
		t.Errorf("a consumer of the failed root ran: %v", ran)
	}

	// "Re-run failed jobs": attempt 2 of the four that failed, root fixed.
	// The consumers start with root's failed record of attempt 1 in place
	// and wait for its attempt 2.
	r.resetEvents()
	r.fail["root"] = false
	r.writeStack("root")
	var failed []matrixEntry
	for _, e := range m {
		if e.Stack != "alone" {
			failed = append(failed, e)
		}
	}
	res = r.runMatrix(failed, "101", 2)
	if got := codes(res); got != "root=0 left=0 right=0 leaf=0" {
		t.Fatalf("run 101 attempt 2: %s\nleft: %s", got, res["left"])
	}
	if v := r.leafVersion(); v != "leaf-1(left-1(root-2()) right-1(root-2()))" {
		t.Errorf("leaf read %q after attempt 2", v)
	}
	r.noLocks()
}

func TestRunIDDeploysTheMatrixInOrderOnFileBackends(t *testing.T) {
	runIDScenario(t, "backend: {state: file://../.deployer, lock: file://../.deployer}\n")
}

// The action's matrix mode: matrix: true sets the outputs matrix and
// stack-count; run-id (with upstream, run-attempt, wait-timeout) makes the
// deploy step one job of the run, and is refused with all: true.
func TestActionMatrixModeAndRunIDJobs(t *testing.T) {
	r := newStackRepo(t, "backend: {state: file://../.deployer, lock: file://../.deployer}\n")
	res, outputs, _ := newRunner(t, r.dir).runStep(map[string]string{"matrix": "true", "environment": "dev", "command": "ignored"})
	want := `exit-code=0
matrix={"include":[{"stack":"alone","dir":"alone","upstream":[]},{"stack":"root","dir":"root","upstream":[]},{"stack":"left","dir":"left","upstream":["root"]},{"stack":"right","dir":"right","upstream":["root"]},{"stack":"leaf","dir":"leaf","upstream":["root","left","right"]}]}
stack-count=5
`
	if res.code != 0 || outputs != want {
		t.Fatalf("matrix step: %s\noutputs:\n%s", res, outputs)
	}
	for _, job := range []struct{ stack, upstream, argv string }{
		{"root", "", "deployer deploy --environment dev --run-id 7 --run-attempt 2 --wait-timeout 1m --yes\n"},
		{"left", "root", "deployer deploy --environment dev --run-id 7 --run-attempt 2 --upstream root --wait-timeout 1m --yes\n"},
	} {
		res, outputs, _ := newRunner(t, filepath.Join(r.dir, job.stack)).runStep(map[string]string{"command": "deploy", "environment": "dev",
			"run-id": "7", "run-attempt": "2", "upstream": job.upstream, "wait-timeout": "1m"})
		if res.code != 0 || !strings.HasPrefix(res.stdout, job.argv) || !strings.Contains(outputs, "exit-code=0\n") {
			t.Errorf("%s's job: want %q first\n%s", job.stack, job.argv, res)
		}
	}
	res, _, _ = newRunner(t, r.dir).runStep(map[string]string{"command": "deploy", "environment": "dev", "all": "true", "run-id": "7"})
	if res.code != 2 || !strings.Contains(res.stdout, "run-id is one stack per job: it does not go with all: true") {
		t.Errorf("run-id with all: %s", res)
	}
}

//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// deployAllWorkflow is the shipped workflow of a matrix run
// (docs/many-stacks.md#the-workflow), relative to the repository root.
const deployAllWorkflow = "examples/many-stacks/.github/workflows/deploy-all.yml"

// actRepo makes r's directory a git repository holding the shipped
// workflow, and returns the action's directory for act's
// --local-repository (action.yml and its scripts, as a release tag holds
// them) and the release mirror the action installs deployer from.
func actRepo(t *testing.T, r *stackRepo) (actionDir string, rel release) {
	t.Helper()
	root := actionPath(t)
	actionDir = t.TempDir()
	writeAction(t, actionDir)
	wf, err := os.ReadFile(filepath.Join(root, deployAllWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	r.write(".github/workflows/deploy-all.yml", string(wf))
	// act runs each job in a copy of the repository: the components record
	// their events, and find their partners, in r's directory itself.
	r.write("step.sh", strings.ReplaceAll(stackStep, "../", r.dir+"/"))
	r.write(".gitignore", "events.log\nstarted-*\nbarrier\n")
	r.git("init", "-q", "-b", "main")
	rel = releaseMirror(t, "1.2.3", runtime.GOARCH) // act's RUNNER_ARCH is this machine's
	return actionDir, rel
}

// writeAction copies the action (action.yml and its scripts, as a release
// tag holds them) into dir.
func writeAction(t *testing.T, dir string) {
	t.Helper()
	for src, mode := range map[string]os.FileMode{"action.yml": 0o644, "scripts/github-action/install.sh": 0o755, "scripts/github-action/run.sh": 0o755} {
		data, err := os.ReadFile(filepath.Join(actionPath(t), src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, src)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, src), data, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *stackRepo) git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.email=ci@example.com", "-c", "user.name=ci"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// act runs the workflow on a push to main as run runID under nektos/act in
// host mode (no Docker) and returns act's log and whether every job
// succeeded.
func (r *stackRepo) act(actBin, actionDir string, rel release, runID string) (log string, ok bool) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-qm", "run "+runID)
	args := []string{"push", "-P", "ubuntu-latest=-self-hosted", "--actor", "octocat",
		"--local-repository", "deployer-dev/deployer@v1=" + actionDir, "--var", "DEPLOYER_VERSION=1.2.3",
		"--env", "GITHUB_RUN_ID=" + runID, "--concurrent-jobs", "5"}
	args = append(args, rel.actArgs(r.t)...)
	env := []string{"HOME=" + r.t.TempDir(), "NO_COLOR=1", "GOFLAGS=" + os.Getenv("GOFLAGS")}
	for _, kv := range r.env {
		if strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
			continue
		}
		args = append(args, "--env", kv)
	}
	cmd := exec.Command(actBin, args...)
	cmd.Dir = r.dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// The shipped workflow under a real workflow runner (nektos/act, host
// mode) on S3 state and DynamoDB locks: the planning job's matrix is the
// diamond and the independent stack, one job per stack deploys it with
// deploy --run-id. Every stack is deployed once, each after the stacks it
// reads, and alone with root at the same time (the components' recorded
// timestamps; each waits for its partner to start). In the next run root
// fails: exactly its three consumers are skipped (exit 7), alone is not.
func TestActDeployAllWorkflowRunsTheMatrix(t *testing.T) {
	actBin := testenv.Require(t, testenv.Act, "act")
	lint := testenv.Require(t, testenv.Actionlint, "actionlint")
	testenv.RequirePlatform(t, runtime.GOOS == "linux", "act's host mode runs the workflow on this machine; the release mirror holds a linux build")
	if out, err := exec.Command(lint, filepath.Join(actionPath(t), deployAllWorkflow)).CombinedOutput(); err != nil {
		t.Fatalf("actionlint %s: %v\n%s", deployAllWorkflow, err, out)
	}
	rem := newRemote(t, "dynamodb", "s3", "", true)
	r := newStackRepo(t, rem.backendYAML("1h", "30s", "2m"), rem.env...)
	actionDir, rel := actRepo(t, r)

	r.write("barrier", "")
	log, ok := r.act(actBin, actionDir, rel, "100")
	if !ok {
		t.Fatalf("act, run 100:\n%s", log)
	}
	for _, want := range []string{
		`{"include":[{"stack":"alone","dir":"alone","upstream":[]},{"stack":"root","dir":"root","upstream":[]},` +
			`{"stack":"left","dir":"left","upstream":["root"]},{"stack":"right","dir":"right","upstream":["root"]},` +
			`{"stack":"leaf","dir":"leaf","upstream":["root","left","right"]}]}`,
		"Waiting for 3 upstream stack(s) of run 100 (attempt 1, up to 1h30m0s): root, left, right",
		"Upstream root: success (deployment dep-",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("act's log lacks %q", want)
		}
	}
	for name, ivs := range r.intervals() {
		if len(ivs) != 1 {
			t.Errorf("%s ran %d times in run 100", name, len(ivs))
		}
	}
	r.checkDiamondTimeline()
	if v := r.leafVersion(); v != "leaf-1(left-1(root-1()) right-1(root-1()))" {
		t.Errorf("leaf read %q", v)
	}
	if t.Failed() {
		t.Fatalf("act's log:\n%s", log)
	}

	// Run 101: root changes and fails.
	r.resetEvents()
	r.fail["root"], r.version["root"] = true, "2"
	r.writeStack("root")
	log, ok = r.act(actBin, actionDir, rel, "101")
	if ok {
		t.Fatalf("act, run 101: every job succeeded though root fails:\n%s", log)
	}
	for _, n := range []string{"left", "right", "leaf"} {
		if want := n + "/dev skipped: upstream root failed (deployment dep-"; strings.Count(log, want) != 1 {
			t.Errorf("act's log should say once %q", want)
		}
	}
	if strings.Contains(log, "alone/dev skipped") || !strings.Contains(log, "No changes; deployment dep-") {
		t.Errorf("alone should run in run 101 with no changes")
	}
	ran := r.intervals()
	if len(ran["root"]) != 1 || len(ran["left"])+len(ran["right"])+len(ran["leaf"])+len(ran["alone"]) != 0 {
		t.Errorf("run 101 should run root's component alone: %v", ran)
	}
	r.noLocks()
	if t.Failed() {
		t.Logf("act's log:\n%s", log)
	}
}

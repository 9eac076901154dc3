//go:build unix

package e2e

// Many stacks across CI jobs (docs/many-stacks.md#one-job-per-stack):
// `stacks --matrix` and `deploy --run-id`, through the built binary, on the
// diamond of stacks_test.go.

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

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
	if _, err := exec.LookPath("git"); err != nil && testenv.InCI() {
		t.Fatal("git is not installed")
	} else if err != nil {
		t.Skip("git is not installed")
	}
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

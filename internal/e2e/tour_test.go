//go:build unix

package e2e

// The README's 30-second tour, run as written: the block is read from
// README.md, each line runs in one bash session (so `cd` carries over) in a
// copy of examples/, with the deployer binary as `deployer` on PATH, and
// each step's exit code must be the one its comment gives ("exit N"; 0 when
// the comment names none). A tour edited into something that fails, or a
// change that breaks a step, fails here.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// tourStep is one line of the tour and the exit code its comment promises.
type tourStep struct {
	line string
	code int
}

var tourExit = regexp.MustCompile(`#.*\bexit (\d+)\s*$`)

// readTour returns the steps of the first ```sh block after the heading
// "## 30-second tour" of the README at path.
func readTour(t *testing.T, path string) []tourStep {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n## 30-second tour\n")
	if !ok {
		t.Fatalf("%s has no \"## 30-second tour\" section", path)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("%s: the tour has no ```sh block", path)
	}
	block, _, ok = strings.Cut(block, "\n```")
	if !ok {
		t.Fatalf("%s: the tour's ```sh block is not closed", path)
	}
	var steps []tourStep
	for line := range strings.SplitSeq(block, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		st := tourStep{line: line}
		if m := tourExit.FindStringSubmatch(line); m != nil {
			st.code, _ = strconv.Atoi(m[1])
		}
		steps = append(steps, st)
	}
	return steps
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && (d.Name() == ".deployer" || d.Name() == "out") {
			return filepath.SkipDir // a demo run in the checkout
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadmeTourRunsAsWritten(t *testing.T) {
	steps := readTour(t, "../../README.md")
	if len(steps) < 10 {
		t.Fatalf("the tour has %d steps; want the README's block", len(steps))
	}
	_, jqErr := exec.LookPath("jq")
	testenv.RequirePlatform(t, jqErr == nil, "the tour's unlock step needs jq: install it (apt-get install jq)")
	root := t.TempDir()
	copyTree(t, "../../examples", filepath.Join(root, "examples"))
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(root, "bin", "deployer")); err != nil {
		t.Fatal(err)
	}
	// One bash session: after each step, its exit code on fd 3.
	var script strings.Builder
	script.WriteString("exec </dev/null\n")
	for i, st := range steps {
		fmt.Fprintf(&script, "echo '>>> %d'; echo '>>> %d' >&2\n%s\necho \"%d $?\" >&3\n", i, i, st.line, i)
	}
	codes, err := os.CreateTemp(t.TempDir(), "codes")
	if err != nil {
		t.Fatal(err)
	}
	defer codes.Close()
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"),
		"NO_COLOR=1", "GITHUB_ACTIONS=", "CI=", "DEPLOYER_BACKEND_STATE=", "DEPLOYER_BACKEND_LOCK=")
	cmd.ExtraFiles = []*os.File{codes}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tour's shell: %v\n%s", err, out)
	}
	if _, err := codes.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	got := map[int]int{}
	sc := bufio.NewScanner(codes)
	for sc.Scan() {
		var i, code int
		if _, err := fmt.Sscan(sc.Text(), &i, &code); err == nil {
			got[i] = code
		}
	}
	for i, st := range steps {
		code, ran := got[i]
		switch {
		case !ran:
			t.Errorf("step %d did not run: %s", i, st.line)
		case code != st.code:
			t.Errorf("step %d exited %d, its comment says %d: %s", i, code, st.code, st.line)
		}
	}
	if t.Failed() {
		t.Logf("the tour's output:\n%s", out)
	}
}

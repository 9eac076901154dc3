//go:build unix

package e2e

// Many stacks (docs/many-stacks.md) through the built binary: a diamond
// root -> left, right -> leaf plus an independent stack alone, each one
// Command component of about a second, on the file backends and on S3 +
// DynamoDB. Order and overlap come from the timestamps the components
// record in events.log, never from how long a run took.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// stackStep is the script of every component: it records "NAME start/end
// NANOS main" in ../events.log (the format p.intervals reads); while
// ../barrier exists it waits (at most 2 minutes) until its partner has
// started too, so two stacks run one after the other fail rather than
// pass; while ../hold-NAME exists it waits (at most 2 minutes); it takes a
// second; it fails when config fail is true; its output version
// is NAME-VERSION followed by the versions it reads (config reads: the
// variables of its StackReference inputs).
const stackStep = `#!/bin/sh
set -eu
name=$1 partner=${2:-}
echo "$name start $(date +%s%N) main" >> ../events.log
touch "../started-$name"
n=0
if [ -n "$partner" ] && [ -e ../barrier ]; then
	while [ ! -e "../started-$partner" ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done
fi
while [ -e "../hold-$name" ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done
sleep 1
echo "$name end $(date +%s%N) main" >> ../events.log
if [ "${DEPLOYER_CONFIG_FAIL:-false}" = true ]; then echo "$name fails as configured" >&2; exit 1; fi
[ "$DEPLOYER_ACTION" = delete ] && exit 0
read="" i=0
while var=$(printenv "DEPLOYER_CONFIG_READS_$i"); do
	read="$read${read:+ }$(printenv "$var" || echo "?")"
	i=$((i + 1))
done
printf '{"version":"%s-%s(%s)"}' "$name" "$DEPLOYER_CONFIG_VERSION" "$read" > "$DEPLOYER_OUTPUTS"
`

// stackRepo is a directory of stacks sharing one state and lock backend.
type stackRepo struct {
	*project
	backend string // the backend: section of every deployer.yaml
	fail    map[string]bool
	version map[string]string
}

var diamondReads = map[string][]string{"root": nil, "left": {"root"}, "right": {"root"}, "leaf": {"left", "right"}, "alone": nil}

// partners start at the same time in a correct run: left with right, and
// alone with root. Each waits for the other (under the barrier), so a
// partner whose job starts late on a loaded machine still overlaps.
var partners = map[string]string{"left": "right", "right": "left", "alone": "root", "root": "alone"}

func newStackRepo(t *testing.T, backend string, env ...string) *stackRepo {
	t.Helper()
	r := &stackRepo{project: &project{t: t, dir: t.TempDir()}, backend: backend,
		fail: map[string]bool{}, version: map[string]string{}}
	r.env = append(r.env, env...)
	// No Pulumi CLI: StackReference needs none (docs/kinds.md).
	r.env = append(r.env, "PATH="+pathWithout(t, "pulumi"))
	r.write("step.sh", stackStep)
	for name := range diamondReads {
		r.version[name] = "1"
		r.writeStack(name)
	}
	return r
}

// writeStack writes name/deployer.yaml from the repo's settings.
func (r *stackRepo) writeStack(name string) {
	r.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "stack: %s\n%senvironments: {dev: {}}\nservices:\n", name, r.backend)
	var deps, vars []string
	if reads := diamondReads[name]; len(reads) > 0 {
		b.WriteString("  up:\n    components:\n")
		for _, p := range reads {
			fmt.Fprintf(&b, "      %s:\n        kind: StackReference\n        config: {stack: %s}\n", p, p)
			deps = append(deps, "up/"+p)
			vars = append(vars, "DEPLOYER_DEP_UP_"+strings.ToUpper(p)+"_OUTPUTS_S_C_VERSION")
		}
	}
	fmt.Fprintf(&b, "  s:\n    components:\n      c:\n        kind: Command\n")
	if len(deps) > 0 {
		fmt.Fprintf(&b, "        depends_on: [%s]\n", strings.Join(deps, ", "))
	}
	fmt.Fprintf(&b, "        config: {version: %q, fail: %v, reads: [%s]}\n", r.version[name], r.fail[name], strings.Join(vars, ", "))
	cmd := "sh ../step.sh " + name + " " + partners[name]
	fmt.Fprintf(&b, "        command: {create: %q, delete: %q, timeout: 3m}\n", cmd, cmd)
	r.write(filepath.Join(name, "deployer.yaml"), b.String())
}

// stackLine is one line of --json output of plan/deploy/destroy --all.
type stackLine struct {
	Stack   string   `json:"stack"`
	Status  string   `json:"status"`
	Reason  string   `json:"reason"`
	Changed bool     `json:"changed"`
	Serial  int64    `json:"serial"`
	Stale   []string `json:"stale"`
}

// all runs deployer ARGS... --json in the repository and returns the
// status of each stack by name, checking the exit code.
func (r *stackRepo) all(code int, args ...string) map[string]stackLine {
	r.t.Helper()
	res := r.mustRun(code, append(args, "--json")...)
	out := map[string]stackLine{}
	for _, l := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		if l == "" {
			continue
		}
		var s stackLine
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			r.t.Fatalf("line %q: %v\n%s", l, err, res)
		}
		if _, dup := out[s.Stack]; dup {
			r.t.Fatalf("stack %s reported twice\n%s", s.Stack, res)
		}
		out[s.Stack] = s
	}
	return out
}

func statusesOf(lines map[string]stackLine) string {
	var parts []string
	for _, n := range []string{"alone", "root", "left", "right", "leaf"} {
		if l, ok := lines[n]; ok {
			s := n + "=" + l.Status
			if l.Status == "skipped" {
				s += " (" + l.Reason + ")"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// span is the first start and the last end a stack's component recorded.
func (r *stackRepo) span(name string) interval {
	r.t.Helper()
	ivs := r.intervals()[name]
	if len(ivs) == 0 {
		r.t.Fatalf("%s recorded nothing in events.log", name)
	}
	s := ivs[0]
	for _, iv := range ivs[1:] {
		s.start, s.end = min(s.start, iv.start), max(s.end, iv.end)
	}
	return s
}

// resetEvents starts a new timeline.
func (r *stackRepo) resetEvents() {
	r.t.Helper()
	for _, f := range []string{"events.log", "barrier", "started-root", "started-left", "started-right", "started-leaf", "started-alone"} {
		if err := os.Remove(filepath.Join(r.dir, f)); err != nil && !os.IsNotExist(err) {
			r.t.Fatal(err)
		}
	}
}

// checkDiamondTimeline asserts, from the recorded timestamps, that every
// stack ran after the stacks it reads, and that left and right, and alone
// and root, overlapped.
func (r *stackRepo) checkDiamondTimeline() {
	r.t.Helper()
	sp := map[string]interval{}
	for n := range diamondReads {
		sp[n] = r.span(n)
	}
	for consumer, reads := range diamondReads {
		for _, p := range reads {
			if sp[p].end > sp[consumer].start {
				r.t.Errorf("%s started (%d) before its producer %s ended (%d)", consumer, sp[consumer].start, p, sp[p].end)
			}
		}
	}
	for _, pair := range [][2]string{{"left", "right"}, {"alone", "root"}} {
		a, b := sp[pair[0]], sp[pair[1]]
		if !(a.start < b.end && b.start < a.end) {
			r.t.Errorf("%s [%d, %d] and %s [%d, %d] did not overlap", pair[0], a.start, a.end, pair[1], b.start, b.end)
		}
	}
}

// noLocks asserts that the shared lock backend holds no lock.
func (r *stackRepo) noLocks() {
	r.t.Helper()
	p := &project{t: r.t, dir: filepath.Join(r.dir, "root"), env: r.env}
	if l := p.locks(); len(l) != 0 {
		r.t.Errorf("locks left behind: %+v", l)
	}
}

// leafVersion is the output leaf's component saved.
func (r *stackRepo) leafVersion() string {
	r.t.Helper()
	res := r.mustRun(0, "state", "show", "-s", "leaf", "-e", "dev", "--json", "--config", "leaf/deployer.yaml")
	var st stateDoc
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
		r.t.Fatalf("state show: %v\n%s", err, res)
	}
	v, _ := st.Resources["s/c"].Outputs["version"].(string)
	return v
}

// diamondScenario is the acceptance run of docs/many-stacks.md on one
// pair of backends.
func diamondScenario(t *testing.T, backend string, env ...string) {
	r := newStackRepo(t, backend, env...)

	res := r.mustRun(0, "stacks", "--json")
	var listed struct {
		Stacks []struct {
			Name string `json:"name"`
		} `json:"stacks"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &listed); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, s := range listed.Stacks {
		order = append(order, s.Name)
	}
	if want := []string{"alone", "root", "left", "right", "leaf"}; !slices.Equal(order, want) {
		t.Fatalf("stacks order = %v, want %v", order, want)
	}

	r.write("barrier", "")
	got := r.all(0, "deploy", "-e", "dev", "--all", "--yes")
	if s := statusesOf(got); s != "alone=applied, root=applied, left=applied, right=applied, leaf=applied" {
		t.Fatalf("first deploy --all: %s", s)
	}
	r.checkDiamondTimeline()
	r.resetEvents()
	r.noLocks()
	if v := r.leafVersion(); v != "leaf-1(left-1(root-1()) right-1(root-1()))" {
		t.Errorf("leaf's output = %q", v)
	}

	// A changed output of root reaches leaf in one deploy --all.
	r.resetEvents()
	r.version["root"] = "2"
	r.writeStack("root")
	got = r.all(0, "deploy", "-e", "dev", "--all", "--yes")
	if s := statusesOf(got); s != "alone=no-changes, root=applied, left=applied, right=applied, leaf=applied" {
		t.Fatalf("deploy --all after root's change: %s", s)
	}
	if v := r.leafVersion(); v != "leaf-1(left-1(root-2()) right-1(root-2()))" {
		t.Errorf("root's new output did not reach leaf: %q", v)
	}
	got = r.all(0, "plan", "-e", "dev", "--all", "--detailed-exitcode")
	if s := statusesOf(got); s != "alone=no-changes, root=no-changes, left=no-changes, right=no-changes, leaf=no-changes" {
		t.Fatalf("plan --all after the deploy: %s", s)
	}
	r.noLocks()

	// A failing left skips leaf; right and alone apply.
	r.resetEvents()
	for _, n := range []string{"left", "right", "alone"} {
		r.version[n] = "3"
	}
	r.fail["left"] = true
	for _, n := range []string{"left", "right", "alone"} {
		r.writeStack(n)
	}
	got = r.all(1, "deploy", "-e", "dev", "--all", "--yes")
	if s := statusesOf(got); s != "alone=applied, root=no-changes, left=failed, right=applied, leaf=skipped (producer left failed)" {
		t.Fatalf("deploy --all with a failing left: %s", s)
	}
	if r.intervals()["leaf"] != nil {
		t.Error("leaf ran although its producer left failed")
	}
	r.noLocks()

	// destroy --all goes consumers first.
	r.resetEvents()
	r.fail["left"] = false
	r.writeStack("left")
	got = r.all(0, "destroy", "-e", "dev", "--all", "--yes")
	if s := statusesOf(got); s != "alone=destroyed, root=destroyed, left=destroyed, right=destroyed, leaf=destroyed" {
		t.Fatalf("destroy --all: %s", s)
	}
	sp := map[string]interval{}
	for n := range diamondReads {
		sp[n] = r.span(n)
	}
	for consumer, reads := range diamondReads {
		for _, p := range reads {
			if sp[consumer].end > sp[p].start {
				t.Errorf("destroy: %s started before its consumer %s ended", p, consumer)
			}
		}
	}
	r.noLocks()
}

func TestStacksDiamondOnFileBackends(t *testing.T) {
	diamondScenario(t, "backend: {state: file://../.deployer, lock: file://../.deployer}\n")
}

func TestStacksDiamondOnS3StateAndDynamoDBLocks(t *testing.T) {
	rem := newRemote(t, "dynamodb", "s3", "", true)
	diamondScenario(t, rem.backendYAML("1h", "30s", "2m"), rem.env...)
}

func TestStacksChangedSinceInAGitRepository(t *testing.T) {
	_, err := exec.LookPath("git")
	testenv.RequirePlatform(t, err == nil, "git is not installed")
	r := newStackRepo(t, "backend: {state: file://../.deployer, lock: file://../.deployer}\n")
	r.write(".gitignore", ".deployer/\nevents.log\nstarted-*\n")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.email=e2e@example.com", "-c", "user.name=e2e"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	r.all(0, "deploy", "-e", "dev", "--all", "--yes")
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "stacks")

	res := r.mustRun(0, "plan", "-e", "dev", "--all", "--changed-since", "HEAD")
	if !strings.Contains(res.stderr, "No stack changed since HEAD.") || strings.TrimSpace(res.stdout) != "" {
		t.Fatalf("nothing changed: %s", res)
	}

	r.version["left"] = "2"
	r.writeStack("left")
	got := r.all(2, "plan", "-e", "dev", "--all", "--changed-since", "HEAD", "--detailed-exitcode")
	// leaf's own plan has no change yet: it reads left's current outputs,
	// and says that left has changes pending.
	if s := statusesOf(got); s != "left=changes, leaf=no-changes" || !slices.Equal(got["leaf"].Stale, []string{"left"}) {
		t.Fatalf("changed since HEAD: %s (leaf stale: %v), want left and the stack that reads it", s, got["leaf"].Stale)
	}
	git("commit", "-q", "-am", "left v2")
	r.write("right/notes.txt", "a new file in right's directory")
	got = r.all(0, "plan", "-e", "dev", "--all", "--changed-since", "HEAD~1")
	if s := statusesOf(got); s != "left=changes, right=no-changes, leaf=no-changes" {
		t.Fatalf("changed since HEAD~1 with an untracked file in right/: %s", s)
	}
	res = r.mustRun(1, "plan", "-e", "dev", "--all", "--changed-since", "no-such-ref")
	if !strings.Contains(res.stderr, "fetch-depth: 0") {
		t.Errorf("unknown revision: %s", res)
	}
}

func TestStacksCtrlCStopsTheQueueAndReleasesEveryLock(t *testing.T) {
	r := newStackRepo(t, "backend: {state: file://../.deployer, lock: file://../.deployer}\n")
	// root and alone wait while hold-root and hold-alone exist: both are
	// running when the signal comes, and nothing else could have started.
	r.write("hold-root", "")
	r.write("hold-alone", "")
	run := r.start("deploy", "-e", "dev", "--all", "--yes", "--json")
	eventually(t, 2*time.Minute, "root and alone running", func() bool {
		_, errRoot := os.Stat(filepath.Join(r.dir, "started-root"))
		_, errAlone := os.Stat(filepath.Join(r.dir, "started-alone"))
		return errRoot == nil && errAlone == nil
	})
	if err := syscall.Kill(run.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	res := run.wait(t, 2*time.Minute)
	if res.code != 130 {
		t.Fatalf("want exit 130 after Ctrl-C: %s", res)
	}
	lines := map[string]stackLine{}
	for _, l := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var s stackLine
		if json.Unmarshal([]byte(l), &s) == nil {
			lines[s.Stack] = s
		}
	}
	for _, n := range []string{"left", "right", "leaf"} {
		if l := lines[n]; l.Status != "skipped" || l.Reason != "cancelled before it started" {
			t.Errorf("%s: %+v, want skipped: cancelled before it started\n%s", n, l, res)
		}
	}
	for _, n := range []string{"left", "right", "leaf"} {
		if r.intervals()[n] != nil {
			t.Errorf("%s started after Ctrl-C", n)
		}
	}
	r.noLocks()
}

// pathWithout is $PATH without the directories that hold an executable
// named name.
func pathWithout(t testing.TB, name string) string {
	t.Helper()
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// TestActionDeployAllStacks runs the action's script with all: true: one
// job summary section per stack as it finishes, the failed stack annotated
// and named in the outputs, its reader skipped with the reason.
func TestActionDeployAllStacks(t *testing.T) {
	r := newStackRepo(t, "backend: {state: file://../.deployer, lock: file://../.deployer}\n")
	r.fail["left"] = true
	r.writeStack("left")
	run := newRunner(t, r.dir)
	res, outputs, summary := run.runStep(map[string]string{"command": "deploy", "environment": "dev", "all": "true", "stack": "ignored"})
	if res.code != 1 {
		t.Fatalf("deploy step with a failing stack: want exit 1, got %s", res)
	}
	if !strings.HasPrefix(res.stdout, "deployer deploy --all --environment dev --yes\n") {
		t.Errorf("the step should run deploy --all:\n%s", res.stdout)
	}
	if want := "changes=true\nfailed-stacks=left\nexit-code=1\n"; outputs != want {
		t.Errorf("outputs = %q, want %q", outputs, want)
	}
	var sections []string
	for _, l := range strings.Split(summary, "\n") {
		if strings.HasPrefix(l, "### ") {
			sections = append(sections, l)
		}
	}
	slices.Sort(sections)
	want := []string{"### deployer deploy: alone/dev", "### deployer deploy: leaf/dev", "### deployer deploy: left/dev",
		"### deployer deploy: right/dev", "### deployer deploy: root/dev"}
	if !slices.Equal(sections, want) {
		t.Errorf("summary sections = %q, want one per stack\n%s", sections, summary)
	}
	if !strings.Contains(summary, "### deployer deploy: leaf/dev\n\n**Skipped:** producer left failed\n") {
		t.Errorf("leaf's section should say why it was skipped:\n%s", summary)
	}
	if !strings.Contains(commands(res.stdout+res.stderr), "::error title=Stack left failed::") {
		t.Errorf("no annotation for the failed stack:\n%s", commands(res.stdout+res.stderr))
	}
	res, _, _ = run.runStep(map[string]string{"command": "plan", "environment": "dev", "changed-since": "HEAD"})
	if res.code != 2 || !strings.Contains(res.stdout, "changed-since needs all: true") {
		t.Errorf("changed-since without all: %s", res)
	}
}

// TestManyStacksExample walks through examples/many-stacks/README.md in a
// copy of the example, with no Pulumi CLI on PATH.
func TestManyStacksExample(t *testing.T) {
	p := &project{t: t, dir: t.TempDir()}
	p.env = append(p.env, "PATH="+pathWithout(t, "pulumi"))
	src := filepath.Join(actionPath(t), "examples", "many-stacks")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if strings.HasPrefix(rel, ".deployer") || strings.HasPrefix(rel, "out") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err == nil {
			p.write(rel, string(data))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	expect := func(want string, args ...string) {
		t.Helper()
		if res := p.mustRun(0, args...); !strings.Contains(res.stdout, want) {
			t.Errorf("deployer %s: want %q in\n%s", strings.Join(args, " "), want, res)
		}
	}
	appVersion := func(want string) {
		t.Helper()
		if got := string(p.read("out/dev/many-app.web.api.json")); !strings.Contains(got, `"version":"`+want+`"`) {
			t.Errorf("app's output = %s, want version %s", got, want)
		}
	}
	expect("5  many-app         app         many-cache, many-database  -", "stacks")
	expect("5 stacks in dev: 2 changes, 3 skipped.", "plan", "-e", "dev", "--all")
	expect("5 stacks in dev: 5 applied.", "deploy", "-e", "dev", "--all", "--yes")
	appVersion("1 [1 [1] 1 [1]]")
	net := strings.Replace(string(p.read("network/deployer.yaml")), `config: {version: "1"}`, `config: {version: "2"}`, 1)
	p.write("network/deployer.yaml", net)
	expect("5 stacks in dev: 4 applied, 1 no-changes.", "deploy", "-e", "dev", "--all", "--yes")
	appVersion("1 [1 [2] 1 [2]]") // network's new version reached app in one run
	expect("5 stacks in dev: 5 no-changes.", "plan", "-e", "dev", "--all", "--detailed-exitcode")
	expect("5 stacks in dev: 5 destroyed.", "destroy", "-e", "dev", "--all", "--yes")
	if _, err := os.Stat(filepath.Join(p.dir, "out/dev/many-network.net.vpc.json")); !os.IsNotExist(err) {
		t.Errorf("destroy left network's file: %v", err)
	}
}

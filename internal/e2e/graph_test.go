//go:build unix

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// graphScript logs "NAME start/end NANOS main" to events.log, sleeps $2
// seconds, fails when the file fail-NAME exists, and writes outputs whose
// "value" is $3 (default: the component's config.value, so a config change
// shows in its outputs).
const graphScript = `#!/bin/sh
name=$1
echo "$name start $(date +%s%N) main" >> events.log
sleep "${2:-0}"
echo "$name end $(date +%s%N) main" >> events.log
if [ -f "fail-$name" ]; then echo "$name was told to fail" >&2; exit 3; fi
printf '{"value":"%s"}' "${3:-${DEPLOYER_CONFIG_VALUE:-}}" > "$DEPLOYER_OUTPUTS"
`

func newGraphProject(t *testing.T, components string) *project {
	t.Helper()
	p := newProject(t, "stack: graph\nenvironments:\n  dev: {}\nservices:\n  s:\n    components:\n"+components)
	p.write("step.sh", graphScript)
	return p
}

// sleepers is n independent components s/c1..s/cN that sleep 1 s each, and
// s/join, which depends on all of them.
func sleepers(n int) string {
	var b strings.Builder
	var deps []string
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "      c%d: {kind: Command, config: {value: v}, command: {create: ./step.sh c%d 1}}\n", i, i)
		deps = append(deps, fmt.Sprintf("c%d", i))
	}
	fmt.Fprintf(&b, "      join: {kind: Command, depends_on: [%s], config: {value: v}, command: {create: ./step.sh join 0}}\n", strings.Join(deps, ", "))
	return b.String()
}

// span returns the earliest start and the latest end of the named intervals.
func span(iv map[string][]interval, names []string) (first, last int64) {
	for i, n := range names {
		x := iv[n][0]
		if i == 0 || x.start < first {
			first = x.start
		}
		if x.end > last {
			last = x.end
		}
	}
	return first, last
}

func TestIndependentComponentsApplyConcurrentlyAndDependentsWait(t *testing.T) {
	names := []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"default parallelism", nil},
		{"parallelism 1", []string{"--parallelism", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newGraphProject(t, sleepers(8))
			began := time.Now()
			r := p.mustRun(0, append([]string{"deploy", "-e", "dev", "--yes"}, tc.args...)...)
			wall := time.Since(began)
			iv := p.intervals()
			for _, n := range append(slices.Clone(names), "join") {
				if len(iv[n]) != 1 || iv[n][0].end == 0 {
					t.Fatalf("%s ran %d times: %v\n%s", n, len(iv[n]), iv[n], r)
				}
			}
			first, last := span(iv, names)
			t.Logf("8 x sleep 1: components ran over %.2fs, deploy took %.2fs", float64(last-first)/1e9, wall.Seconds())

			// No dependent starts before its dependencies finished.
			if j := iv["join"][0]; j.start < last {
				t.Errorf("s/join started %dms before its last dependency finished", (last-j.start)/1e6)
			}
			if tc.args == nil {
				// All eight were running at one moment: every start comes
				// before every end (the sleeps overlap; wall time ~1 s).
				latestStart, earliestEnd := int64(0), int64(1<<62)
				for _, n := range names {
					latestStart = max(latestStart, iv[n][0].start)
					earliestEnd = min(earliestEnd, iv[n][0].end)
				}
				if latestStart >= earliestEnd {
					t.Errorf("the 8 independent components did not all run at once: a start at %d came after an end at %d", latestStart, earliestEnd)
				}
				return
			}
			// --parallelism 1: one at a time, in apply order (by address).
			for i := 1; i < len(names); i++ {
				if prev, cur := iv[names[i-1]][0], iv[names[i]][0]; cur.start < prev.end {
					t.Errorf("%s started before %s ended with --parallelism 1", names[i], names[i-1])
				}
			}
		})
	}
}

// Concurrent components' output lines each carry their component prefix and
// are never cut into one another.
func TestConcurrentOutputLinesStayWhole(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "      p%d: {kind: Command, config: {value: v}, command: {create: 'for i in 1 2 3 4 5 6 7 8 9 10; do echo line-$i-of-p%d-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done; echo {} > $DEPLOYER_OUTPUTS'}}\n", i, i)
	}
	p := newGraphProject(t, b.String())
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	line := regexp.MustCompile(`^\[s/(p\d)\] line-\d+-of-(p\d)-x{48}$`)
	n := 0
	for _, l := range strings.Split(r.stderr, "\n") {
		if !strings.Contains(l, "] line-") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil || m[1] != m[2] {
			t.Errorf("mangled or misattributed line %q", l)
		}
		n++
	}
	if n != 60 {
		t.Errorf("saw %d output lines, want 60:\n%s", n, r.stderr)
	}
}

func TestChainStopsWhereOutputsComeOutEqual(t *testing.T) {
	// b's outputs are the constant "same" whatever a gives it.
	p := newGraphProject(t, `      a: {kind: Command, config: {value: one}, command: {create: ./step.sh a, update: ./step.sh a}}
      b: {kind: Command, depends_on: [a], config: {value: x}, command: {create: ./step.sh b 0 same, update: ./step.sh b 0 same}}
      c: {kind: Command, depends_on: [b], config: {value: x}, command: {create: ./step.sh c, update: ./step.sh c}}
`)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(string(p.read("deployer.yaml")), "value: one", "value: two", 1))

	plan := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	for _, want := range []string{"~ a (Command) update", "? b (Command) inputs from s/a may change", "? c (Command) inputs from s/b may change", "2 to re-evaluate"} {
		if !strings.Contains(plan.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan.stdout)
		}
	}
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if got := p.events("start"); !slices.Equal(got, []string{"a", "b", "c", "a", "b"}) {
		t.Errorf("runs = %v, want a b c then a b (c's inputs came out equal)\n%s", got, r)
	}
	if !strings.Contains(r.stdout, "2 updated") || !strings.Contains(r.stdout, "1 re-evaluated and unchanged") {
		t.Errorf("deploy summary:\n%s", r)
	}
	if !strings.Contains(r.stderr, "[s/c] inputs from s/b unchanged") {
		t.Errorf("deploy does not say c was left alone:\n%s", r.stderr)
	}
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
}

func TestFailedBranchLetsOthersFinishAndNextPlanRetriesIt(t *testing.T) {
	p := newGraphProject(t, `      bad: {kind: Command, config: {value: v}, command: {create: ./step.sh bad}}
      after-bad: {kind: Command, depends_on: [bad], config: {value: v}, command: {create: ./step.sh after-bad}}
      slow1: {kind: Command, config: {value: v}, command: {create: ./step.sh slow1 1}}
      slow2: {kind: Command, config: {value: v}, command: {create: ./step.sh slow2 1}}
`)
	p.write("fail-bad", "")
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	iv := p.intervals()
	if len(iv["after-bad"]) != 0 {
		t.Errorf("after-bad started although bad failed:\n%s", r)
	}
	for _, n := range []string{"slow1", "slow2"} {
		if len(iv[n]) != 1 || iv[n][0].end == 0 || iv[n][0].end < iv["bad"][0].end {
			t.Errorf("%s did not run to its end after bad failed: %v", n, iv[n])
		}
	}
	st := p.state("graph", "dev")
	if st.DeploymentHistory[0].Status != "failed" {
		t.Errorf("deployment status %q, want failed", st.DeploymentHistory[0].Status)
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for a := range st.Resources {
			if !yield(a) {
				return
			}
		}
	})
	if !slices.Equal(got, []string{"s/slow1", "s/slow2"}) {
		t.Errorf("state resources = %v, want the two that succeeded", got)
	}
	plan := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(plan.stdout, "Plan: 2 to create, 0 to update, 0 to replace, 0 to delete, 2 unchanged.") {
		t.Errorf("next plan should retry only bad and after-bad:\n%s", plan.stdout)
	}
	if err := os.Remove(filepath.Join(p.dir, "fail-bad")); err != nil {
		t.Fatal(err)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
}

// The README tour: after a version bump, one deploy brings the published
// site to the new version and checksum, and the next plan has no changes.
func TestQuickstartVersionBumpReachesThePublishedSite(t *testing.T) {
	p := &project{t: t, dir: t.TempDir()}
	src := "../../examples/quickstart"
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == "out" || rel == ".deployer" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		p.write(rel, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(string(p.read("deployer.yaml")), "version: 1.0.0", "version: 1.1.0", 1))
	p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")

	bundle := p.read("out/dev/build/hello-1.1.0.bundle.sha256")
	sum := strings.Fields(string(bundle))[0]
	site := string(p.read("out/dev/published/beta/index.html"))
	for _, want := range []string{"<code>1.1.0</code>", "<code>" + sum + "</code>"} {
		if !strings.Contains(site, want) {
			t.Errorf("published site lacks %s:\n%s", want, site)
		}
	}
	if strings.Contains(site, "1.0.0") {
		t.Errorf("published site still names 1.0.0:\n%s", site)
	}
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
}

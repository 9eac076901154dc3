//go:build unix

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// benchSleep is how long each benchmark stack's component takes, in
// seconds: DEPLOYER_BENCH_SLEEP, default 2 (docs/many-stacks.md#one-runner-or-a-matrix).
func benchSleep() string {
	if s := os.Getenv("DEPLOYER_BENCH_SLEEP"); s != "" {
		return s
	}
	return "2"
}

// benchStacks is how many stacks the benchmark deploys:
// DEPLOYER_BENCH_STACKS, default 50.
func benchStacks(b *testing.B) int {
	if s := os.Getenv("DEPLOYER_BENCH_STACKS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("DEPLOYER_BENCH_STACKS=%q: want a number of stacks", s)
		}
		return n
	}
	return 50
}

// benchReads is stack i's upstream stacks: the stack five before it, and
// every tenth stack also the one three before it; ten layers of five for
// 50 stacks, with some fan-in.
func benchReads(i int) []int {
	var r []int
	if i >= 5 {
		r = append(r, i-5)
	}
	if i%10 == 0 && i >= 3 {
		r = append(r, i-3)
	}
	return r
}

// writeBenchStacks writes n stacks b00, b01, ... under dir, each one
// Command component that sleeps benchSleep() seconds after reading its
// upstream stacks' outputs through StackReference components.
func writeBenchStacks(b *testing.B, dir, backend string, n int) {
	for i := 0; i < n; i++ {
		var y strings.Builder
		fmt.Fprintf(&y, "stack: b%02d\n%senvironments: {dev: {}}\nservices:\n", i, backend)
		var deps []string
		if reads := benchReads(i); len(reads) > 0 {
			y.WriteString("  up:\n    components:\n")
			for _, r := range reads {
				fmt.Fprintf(&y, "      b%02d:\n        kind: StackReference\n        config: {stack: b%02d}\n", r, r)
				deps = append(deps, fmt.Sprintf("up/b%02d", r))
			}
		}
		y.WriteString("  s:\n    components:\n      c:\n        kind: Command\n")
		if len(deps) > 0 {
			fmt.Fprintf(&y, "        depends_on: [%s]\n", strings.Join(deps, ", "))
		}
		fmt.Fprintf(&y, "        config: {sleep: %q}\n", benchSleep())
		y.WriteString("        command: {create: \"sleep $DEPLOYER_CONFIG_SLEEP; echo '{\\\"ok\\\":true}' > \\\"$DEPLOYER_OUTPUTS\\\"\", delete: \"true\"}\n")
		d := filepath.Join(dir, fmt.Sprintf("b%02d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "deployer.yaml"), []byte(y.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRun runs deployer ARGS in dir with env and returns its stderr.
func benchRun(b *testing.B, dir string, env []string, args ...string) (stdout, stderr string) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "GITHUB_ACTIONS=", "DEPLOYER_BACKEND_STATE=", "DEPLOYER_BACKEND_LOCK=", "PATH="+pathWithout(b, "pulumi")), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("deployer %s in %s: %v\n%s%s", strings.Join(args, " "), dir, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// upstreamReads matches the line deploy --run-id prints when an upstream
// stack's wait ended: its reads of that stack's state.
var upstreamReads = regexp.MustCompile(`(?m)^Upstream \S+: \S+ .* after [0-9.]+s, (\d+) read\(s\)$`)

// runMatrix deploys the stacks under dir as a matrix run: the planning
// job's stacks --matrix, then runners workers that each take the next
// entry in the matrix's order (as GitHub starts matrix jobs up to
// max-parallel) and run deploy --run-id in its directory. It returns the
// reads of upstream states the waits made, in all.
func benchMatrix(b *testing.B, dir string, env []string, runners int, runID string) (reads int) {
	out, _ := benchRun(b, dir, env, "stacks", "-e", "dev", "--matrix")
	var m struct {
		Include []matrixEntry `json:"include"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		b.Fatal(err)
	}
	jobs := make(chan matrixEntry, len(m.Include))
	for _, e := range m.Include {
		jobs <- e
	}
	close(jobs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < runners; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range jobs {
				_, stderr := benchRun(b, filepath.Join(dir, e.Dir), env, "deploy", "-e", "dev", "--yes", "--run-id", runID,
					"--run-attempt", "1", "--upstream", strings.Join(e.Upstream, ","), "--wait-timeout", "30m")
				n := 0
				for _, sm := range upstreamReads.FindAllStringSubmatch(stderr, -1) {
					k, _ := strconv.Atoi(sm[1])
					n += k
				}
				mu.Lock()
				reads += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return reads
}

// BenchmarkManyStacksRunners deploys 50 stacks (DEPLOYER_BENCH_STACKS)
// whose component sleeps 2 s (DEPLOYER_BENCH_SLEEP) on S3 state and
// DynamoDB locks, in ten layers of five: as a matrix run on 5 simulated
// runners (5 deploy --run-id processes at a time), and as one
// deploy --all --stack-parallelism 5. ns/op is the wall time of the whole
// run; wait-reads/op the reads of upstream states that the matrix jobs'
// waits added (one GET of state.json each), which deploy --all does not
// make.
func BenchmarkManyStacksRunners(b *testing.B) {
	n := benchStacks(b)
	for _, mode := range []string{"matrix-5-runners", "all-parallelism-5"} {
		b.Run(mode, func(b *testing.B) {
			reads := 0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				rem := newRemote(b, "dynamodb", "s3", "", true)
				dir := b.TempDir()
				writeBenchStacks(b, dir, rem.backendYAML("1h", "30s", "2m"), n)
				b.StartTimer()
				if mode == "all-parallelism-5" {
					benchRun(b, dir, rem.env, "deploy", "--all", "-e", "dev", "--yes", "--stack-parallelism", "5")
					continue
				}
				reads += benchMatrix(b, dir, rem.env, 5, fmt.Sprintf("bench-%d", i))
			}
			b.ReportMetric(float64(reads)/float64(b.N), "wait-reads/op")
			b.ReportMetric(float64(n), "stacks")
		})
	}
}

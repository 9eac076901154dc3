//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// BenchmarkPulumiSideBySide measures deployer's Pulumi engine against what a
// Pulumi user writes without deployer (docs/pulumi.md#speed): the same N
// resources of the test provider (deployertest:index:RandomName) declared in
// an Automation API inline program, each operation a fresh
// UpsertStackInlineSource followed by stack.Up or stack.Destroy, as a deploy
// script does. Both sides use local file backends and the same Pulumi CLI.
//
// For each size it runs DEPLOYER_BENCH_PULUMI_ROUNDS rounds (default 3) of
// create, update of every resource (an input changes in place), no-op (a
// second deploy of the same configuration) and destroy, the two sides
// alternating which goes first, and reports the median seconds of each side
// and their ratio (deployer / Automation API) per operation. A shim in front
// of the CLI logs every Pulumi CLI run, so the summary also says which runs
// each operation made and how long each took. Sizes: 100 and 1000, or
// DEPLOYER_BENCH_PULUMI_SIZES ("100,1000"). `make bench` runs it;
// `make bench BENCH=PulumiSideBySide` runs it alone.
func BenchmarkPulumiSideBySide(b *testing.B) {
	cli, _ := testenv.Pulumi(b)
	b.Setenv("PULUMI_CONFIG_PASSPHRASE", "deployer-bench")
	sizes := benchInts(b, "DEPLOYER_BENCH_PULUMI_SIZES", []int{100, 1000})
	rounds := benchInts(b, "DEPLOYER_BENCH_PULUMI_ROUNDS", []int{3})[0]
	shim := pulumiShim(b, cli)
	var all []benchSize
	for _, n := range sizes {
		b.Run(fmt.Sprintf("resources=%d", n), func(b *testing.B) {
			for range b.N {
				sz := benchSize{n: n, times: map[string][2][]float64{}, runs: map[string][2][]cliRun{}}
				for round := range rounds {
					sz.round(b, shim, round)
				}
				for _, op := range benchOps {
					d, a := sz.median(op)
					b.ReportMetric(d, op+"-deployer-s")
					b.ReportMetric(a, op+"-autoapi-s")
					b.ReportMetric(d/a, op+"-ratio")
				}
				all = append(all, sz)
			}
		})
	}
	printBenchSummary(all)
}

var benchOps = []string{"create", "update", "no-op", "destroy"}

// benchSize holds the measurements of one size: per operation the seconds of
// deployer [0] and of the Automation API [1], and their CLI runs (first round).
type benchSize struct {
	n     int
	times map[string][2][]float64
	runs  map[string][2][]cliRun
}

func (sz *benchSize) median(op string) (deployer, autoAPI float64) {
	t := sz.times[op]
	return median(t[0]), median(t[1])
}

// round runs every operation once on each side, alternating the side that
// goes first (with the round and the operation).
func (sz *benchSize) round(b *testing.B, shim *cliShim, round int) {
	dir := b.TempDir()
	dp := newBenchDeployer(b, dir, sz.n)
	ap := &benchAutoAPI{b: b, n: sz.n, backend: "file://" + filepath.Join(dir, "autoapi"),
		components: os.Getenv("DEPLOYER_BENCH_PULUMI_AUTOAPI_COMPONENTS") == "1"}
	if err := os.MkdirAll(filepath.Join(dir, "autoapi"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i, op := range benchOps {
		sides := []func(){
			func() { sz.record(shim, op, 0, round, func() { dp.run(op) }) },
			func() { sz.record(shim, op, 1, round, func() { ap.run(op) }) },
		}
		if (round+i)%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, s := range sides {
			s()
		}
	}
}

func (sz *benchSize) record(shim *cliShim, op string, side, round int, run func()) {
	shim.reset()
	start := time.Now()
	run()
	secs := time.Since(start).Seconds()
	t := sz.times[op]
	t[side] = append(t[side], secs)
	sz.times[op] = t
	if round == 0 {
		r := sz.runs[op]
		r[side] = shim.runs()
		sz.runs[op] = r
	}
}

// benchDeployer is the deployer side: a project of N PulumiResource
// components deployed with the built binary.
type benchDeployer struct {
	b   *testing.B
	dir string
	n   int
}

func newBenchDeployer(b *testing.B, dir string, n int) *benchDeployer {
	d := &benchDeployer{b: b, dir: filepath.Join(dir, "deployer"), n: n}
	d.write("a")
	return d
}

func (d *benchDeployer) write(prefix string) {
	var y strings.Builder
	fmt.Fprintf(&y, "stack: bench\nbackend: {state: file://%[1]s/.deployer, lock: file://%[1]s/.deployer}\n", d.dir)
	y.WriteString("pulumi: {secrets_provider: passphrase}\nenvironments: {dev: {}}\nservices:\n  app:\n    components:\n")
	for i := range d.n {
		fmt.Fprintf(&y, "      r%d: {kind: PulumiResource, config: {type: \"deployertest:index:RandomName\", properties: {prefix: %s, length: 1}}}\n", i, prefix)
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		d.b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "deployer.yaml"), []byte(y.String()), 0o644); err != nil {
		d.b.Fatal(err)
	}
}

func (d *benchDeployer) run(op string) {
	args := []string{"deploy", "-e", "dev", "--yes"}
	switch op {
	case "update":
		d.write("b")
	case "destroy":
		args = []string{"destroy", "-e", "dev", "--yes"}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = d.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		d.b.Fatalf("deployer %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if op == "no-op" && !strings.Contains(string(out), "No changes") {
		d.b.Fatalf("the second deploy should change nothing:\n%s", out)
	}
}

// benchAutoAPI is the Automation API side: the same resources in an inline
// program, the stack opened anew for each operation.
type benchAutoAPI struct {
	b       *testing.B
	n       int
	backend string
	prefix  string
	// components declares each resource under a component resource of
	// its own with stamped outputs, and exports its value, as deployer's
	// program does (DEPLOYER_BENCH_PULUMI_AUTOAPI_COMPONENTS=1): what the
	// per-component wrapper costs Pulumi itself.
	components bool
}

type benchComponent struct{ pulumi.ResourceState }

func (a *benchAutoAPI) run(op string) {
	ctx := context.Background()
	a.prefix = "a"
	if op == "update" || op == "no-op" || op == "destroy" {
		a.prefix = "b"
	}
	prefix := a.prefix
	stamp := fmt.Sprint(time.Now().UnixNano())
	program := func(ctx *pulumi.Context) error {
		for i := range a.n {
			var r benchResource
			name := fmt.Sprintf("app-r%d", i)
			props := pulumi.Map{"prefix": pulumi.String(prefix), "length": pulumi.Int(1)}
			if !a.components {
				if err := ctx.RegisterResource("deployertest:index:RandomName", name, props, &r); err != nil {
					return err
				}
				continue
			}
			var comp benchComponent
			if err := ctx.RegisterComponentResource("bench:component:Wrap", name, &comp); err != nil {
				return err
			}
			if err := ctx.RegisterResource("deployertest:index:RandomName", name, props, &r, pulumi.Parent(&comp)); err != nil {
				return err
			}
			value := pulumi.Map{"outputs": pulumi.Map{"name": r.Name}, "pulumi": pulumi.Map{"urn": r.URN(), "id": r.ID()}}
			if err := ctx.RegisterResourceOutputs(&comp, pulumi.Map{"deployer": value, "deployment_id": pulumi.String(stamp)}); err != nil {
				return err
			}
			ctx.Export(name, value)
		}
		return nil
	}
	project := workspace.Project{
		Name:    tokens.PackageName("bench"),
		Runtime: workspace.NewProjectRuntimeInfo("go", nil),
		Backend: &workspace.ProjectBackend{URL: a.backend},
	}
	st, err := auto.UpsertStackInlineSource(ctx, "dev", "bench", program, auto.Project(project),
		auto.SecretsProvider("passphrase"),
		auto.EnvVars(map[string]string{"PULUMI_CONFIG_PASSPHRASE": os.Getenv("PULUMI_CONFIG_PASSPHRASE")}))
	if err != nil {
		a.b.Fatalf("open the stack: %v", err)
	}
	if op == "destroy" {
		_, err = st.Destroy(ctx, optdestroy.Message("bench"))
	} else {
		_, err = st.Up(ctx, optup.Message("bench"))
	}
	if err != nil {
		a.b.Fatalf("%s: %v", op, err)
	}
}

type benchResource struct {
	pulumi.CustomResourceState
	Name pulumi.StringOutput `pulumi:"name"`
}

// cliShim is a script named pulumi, first on PATH, that runs the real CLI and
// logs each run: its start and end (ns) and its arguments.
type cliShim struct {
	log string
}

type cliRun struct {
	what string
	secs float64
}

func pulumiShim(b testing.TB, cli string) *cliShim {
	dir := b.TempDir()
	s := &cliShim{log: filepath.Join(dir, "runs.log")}
	script := "#!/bin/bash\ns=$(date +%s%N)\n" + strconv.Quote(cli) + " \"$@\"\nrc=$?\n" +
		"echo \"$s $(date +%s%N) $*\" >> " + strconv.Quote(s.log) + "\nexit $rc\n"
	if err := os.WriteFile(filepath.Join(dir, "pulumi"), []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	b.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return s
}

func (s *cliShim) reset() { _ = os.Remove(s.log) }

// runs returns the CLI runs logged since reset, in start order, each named
// by its command words ("stack export").
func (s *cliShim) runs() []cliRun {
	data, err := os.ReadFile(s.log)
	if err != nil {
		return nil
	}
	type line struct {
		start int64
		run   cliRun
	}
	var lines []line
	for l := range strings.Lines(string(data)) {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		start, _ := strconv.ParseInt(f[0], 10, 64)
		end, _ := strconv.ParseInt(f[1], 10, 64)
		// The command's words: one, two for a command group ("stack
		// export"); flags and their values are left out.
		var words []string
		for _, w := range f[2:] {
			if strings.HasPrefix(w, "-") {
				continue
			}
			words = append(words, w)
			if len(words) == 2 || !slices.Contains([]string{"stack", "plugin", "config"}, w) {
				break
			}
		}
		lines = append(lines, line{start, cliRun{what: strings.Join(words, " "), secs: float64(end-start) / 1e9}})
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].start < lines[j].start })
	out := make([]cliRun, 0, len(lines))
	for _, l := range lines {
		out = append(out, l.run)
	}
	return out
}

func printBenchSummary(all []benchSize) {
	if len(all) == 0 {
		return
	}
	var w strings.Builder
	w.WriteString("\nPulumi side by side: deployer / Automation API, median seconds\n")
	fmt.Fprintf(&w, "%-10s %-8s %10s %10s %7s\n", "resources", "op", "deployer", "auto API", "ratio")
	for _, sz := range all {
		for _, op := range benchOps {
			d, a := sz.median(op)
			fmt.Fprintf(&w, "%-10d %-8s %10.2f %10.2f %6.2fx\n", sz.n, op, d, a, d/a)
		}
	}
	if len(all) > 1 {
		first, last := all[0], all[len(all)-1]
		fmt.Fprintf(&w, "\ngrowth from %d to %d resources (median(%d) / median(%d))\n", first.n, last.n, last.n, first.n)
		fmt.Fprintf(&w, "%-8s %10s %10s\n", "op", "deployer", "auto API")
		for _, op := range benchOps {
			d0, a0 := first.median(op)
			d1, a1 := last.median(op)
			fmt.Fprintf(&w, "%-8s %9.1fx %9.1fx\n", op, d1/d0, a1/a0)
		}
	}
	w.WriteString("\nPulumi CLI runs per operation (first round)\n")
	for _, sz := range all {
		for _, op := range benchOps {
			r := sz.runs[op]
			for side, name := range []string{"deployer", "auto API"} {
				fmt.Fprintf(&w, "%d %s %s: %d runs", sz.n, op, name, len(r[side]))
				for _, c := range r[side] {
					fmt.Fprintf(&w, "; %s %.2fs", c.what, c.secs)
				}
				w.WriteString("\n")
			}
		}
	}
	fmt.Print(w.String())
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func benchInts(b *testing.B, variable string, def []int) []int {
	v := os.Getenv(variable)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want positive integers separated by commas", variable, v)
		}
		out = append(out, n)
	}
	return out
}

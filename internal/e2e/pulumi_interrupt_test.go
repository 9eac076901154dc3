//go:build unix

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The interrupt tests of the Pulumi engine at scale (docs/pulumi.md#cancellation):
// a stack of many components, each a test-provider resource whose create,
// update and delete take a while (DEPLOYERTEST_DELAY), interrupted once the
// provider has finished a given number of operations. After every interrupt
// deployer's state must hold exactly the resources Pulumi's state holds, with
// their outputs; what was in flight when Pulumi was killed is reported as
// pending, by name; no lock and no provider process is left; the next run
// converges.

// manyCount is the number of components of the interrupt tests' stack.
const manyCount = 150

// manyYAML is deployer.yaml of stack "many": manyCount RandomName
// components app/pet-000 ... in environments envs; failAt >= 0 makes that
// component a Failing resource instead, to fail the deploy part way.
func manyYAML(envs []string, failAt int) string {
	var b strings.Builder
	b.WriteString("stack: many\nbackend: {state: file://../.deployer, lock: file://../.deployer}\nenvironments:\n")
	for _, e := range envs {
		fmt.Fprintf(&b, "  %s: {}\n", e)
	}
	b.WriteString("services:\n  app:\n    components:\n")
	for i := range manyCount {
		if i == failAt {
			fmt.Fprintf(&b, "      pet-%03d:\n        kind: PulumiResource\n        config: {type: \"deployertest:index:Failing\", properties: {fail: true, message: \"quota exceeded for pets\"}}\n", i)
			continue
		}
		fmt.Fprintf(&b, "      pet-%03d:\n        kind: PulumiResource\n        config: {type: \"deployertest:index:RandomName\", properties: {length: 1}}\n", i)
	}
	return b.String()
}

// providerJournal is the file the test provider appends its operations to
// (DEPLOYERTEST_JOURNAL): "PID start|done|failed create|update|delete URN".
type providerJournal string

type journalEntry struct {
	pid            int
	phase, op, urn string
}

func (j providerJournal) entries(t *testing.T) []journalEntry {
	t.Helper()
	f, err := os.Open(string(j))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []journalEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 {
			continue // a line being written
		}
		pid, _ := strconv.Atoi(fs[0])
		out = append(out, journalEntry{pid: pid, phase: fs[1], op: fs[2], urn: fs[3]})
	}
	return out
}

// count is the number of operations op that reached phase.
func (j providerJournal) count(t *testing.T, phase, op string) int {
	n := 0
	for _, e := range j.entries(t) {
		if e.phase == phase && e.op == op {
			n++
		}
	}
	return n
}

// pulumiResource is one resource of `pulumi stack export`.
type pulumiResource struct {
	URN     string         `json:"urn"`
	Type    string         `json:"type"`
	ID      string         `json:"id"`
	Parent  string         `json:"parent"`
	Outputs map[string]any `json:"outputs"`
	Protect bool           `json:"protect"`
}

// pulumiExport is what the tests read of `pulumi stack export`.
type pulumiExport struct {
	Resources []pulumiResource `json:"resources"`
	Pending   []struct {
		Type     string         `json:"type"`
		Resource pulumiResource `json:"resource"`
	} `json:"pending_operations"`
}

func (pp *pulumiProject) export(stack, env string) pulumiExport {
	pp.t.Helper()
	var dep struct {
		Deployment pulumiExport `json:"deployment"`
	}
	out := pp.pulumi(stack, env, "stack", "export", "--stack", "organization/"+stack+"/"+env)
	if err := json.Unmarshal([]byte(out), &dep); err != nil {
		pp.t.Fatalf("pulumi stack export: %v\n%s", err, out)
	}
	return dep.Deployment
}

// held maps each resource Pulumi holds (a custom resource named after its
// component: what exists in the cloud) to the component's address; the
// test components have one resource each. It sits at the stack's root
// (docs/pulumi.md#resource-layout) or, in a stack of the previous layout,
// under a "deployer:component:" resource named after the component.
func (e pulumiExport) held() map[string]pulumiResource {
	out := map[string]pulumiResource{}
	for _, r := range e.Resources {
		if r.Type == "pulumi:pulumi:Stack" || strings.HasPrefix(r.Type, "pulumi:providers:") || strings.HasPrefix(r.Type, "deployer:component:") ||
			!(strings.Contains(r.Parent, "::pulumi:pulumi:Stack::") || strings.Contains(r.Parent, "::deployer:component:")) {
			continue
		}
		name := r.URN[strings.LastIndex(r.URN, "::")+2:]
		out[strings.Replace(name, "-", "/", 1)] = r
	}
	return out
}

// pulumiState is what the tests read of deployer's state.json.
type pulumiState struct {
	Resources map[string]struct {
		Status  string         `json:"status"`
		Outputs map[string]any `json:"outputs"`
		Pulumi  *struct {
			URN  string   `json:"urn"`
			ID   string   `json:"id"`
			URNs []string `json:"urns"`
		} `json:"pulumi"`
	} `json:"resources"`
	DeploymentHistory []struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"deployment_history"`
}

func (pp *pulumiProject) pulumiState(stack, env string) pulumiState {
	pp.t.Helper()
	var st pulumiState
	if err := json.Unmarshal([]byte(pp.rawState(stack, env)), &st); err != nil {
		pp.t.Fatal(err)
	}
	return st
}

// sameResources checks that deployer's state of stack/env lists exactly the
// resources Pulumi's state holds, each with Pulumi's URN, id and outputs,
// and that Pulumi keeps no pending operation. It logs and returns how many
// components Pulumi holds.
func (pp *pulumiProject) sameResources(stack, env string) int {
	pp.t.Helper()
	exp := pp.export(stack, env)
	for _, op := range exp.Pending {
		pp.t.Errorf("Pulumi's state keeps a pending %s of %s", op.Type, op.Resource.URN)
	}
	held := exp.held()
	st := pp.pulumiState(stack, env)
	for addr, r := range held {
		sr, ok := st.Resources[addr]
		switch {
		case !ok:
			pp.t.Errorf("Pulumi holds %s (%s) but deployer's state does not list it", addr, r.URN)
		case sr.Pulumi == nil || sr.Pulumi.URN != r.URN || sr.Pulumi.ID != r.ID:
			pp.t.Errorf("deployer's state records %s as %+v, Pulumi holds %s id %s", addr, sr.Pulumi, r.URN, r.ID)
		case sr.Outputs["id"] != r.ID:
			pp.t.Errorf("deployer's state records outputs %v for %s, Pulumi's id is %s", sr.Outputs, addr, r.ID)
		default:
			props, _ := sr.Outputs["properties"].(map[string]any)
			if props["name"] != r.Outputs["name"] {
				pp.t.Errorf("deployer's state records name %v for %s, Pulumi holds %v", props["name"], addr, r.Outputs["name"])
			}
		}
	}
	for addr := range st.Resources {
		if _, ok := held[addr]; !ok {
			pp.t.Errorf("deployer's state lists %s (%s) but Pulumi does not hold it", addr, st.Resources[addr].Status)
		}
	}
	pp.t.Logf("%s/%s: Pulumi holds %d components, deployer's state lists %d", stack, env, len(held), len(st.Resources))
	return len(held)
}

// interrupt is one interrupted run of the interrupt tests.
type interrupt struct {
	name    string
	env     string
	destroy bool
	signals []syscall.Signal // the second one is sent once deployer said it is cancelling
	after   int              // provider operations finished before the first signal
	// duringExport sends the second signal only once Pulumi stopped and
	// deployer reads its state (`pulumi stack export` runs).
	duringExport bool
}

// run starts the interrupted deploy or destroy, signals it once the
// provider has finished in.after operations, and checks what it left.
func (in interrupt) run(t *testing.T, pp *pulumiProject, p *project) {
	t.Helper()
	j := providerJournal(filepath.Join(pp.dir, in.name+".journal"))
	p.env = []string{"DEPLOYERTEST_DELAY=100ms", "DEPLOYERTEST_JOURNAL=" + string(j)}
	defer func() { p.env = nil }()
	verb, op := "deploy", "create"
	if in.destroy {
		verb, op = "destroy", "delete"
	}
	d := p.start(verb, "-e", in.env, "--yes")
	waitFor(t, d, fmt.Sprintf("the provider to finish %d %ss", in.after, op), func() bool { return j.count(t, "done", op) >= in.after })
	if err := syscall.Kill(d.cmd.Process.Pid, in.signals[0]); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	if len(in.signals) > 1 {
		waitFor(t, d, "deployer to report the cancel", func() bool { return strings.Contains(d.errb.String(), "cancelling") })
		if in.duringExport {
			waitFor(t, d, "deployer to export Pulumi's state", func() bool { return running("stack", "export", "--show-secrets") })
		}
		if err := syscall.Kill(d.cmd.Process.Pid, in.signals[1]); err != nil {
			t.Fatal(err)
		}
	}
	r := d.wait(t, 5*time.Minute)
	// A measurement for the log, not a check: the exit follows the state
	// save and the lock release.
	t.Logf("exit %d %.1fs after the first signal", r.code, time.Since(signalled).Seconds())
	for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
		if strings.HasPrefix(l, "Deployment ") || strings.Contains(l, "operations pending") {
			t.Log(l)
		}
	}
	if r.code != 130 {
		t.Fatalf("an interrupted %s exits 130: %s", verb, r)
	}
	if locks := p.locks(); len(locks) != 0 {
		t.Fatalf("the interrupted %s left its lock: %+v", verb, locks)
	}
	st := pp.pulumiState("many", in.env)
	if h := st.DeploymentHistory; len(h) == 0 || h[0].Status != "cancelled" {
		t.Errorf("the %s should be recorded as cancelled: %+v", verb, h)
	}
	pp.sameResources("many", in.env)

	// An operation the provider started whose resource Pulumi's state does
	// not reflect was in flight when Pulumi was killed: it must be named as
	// pending. A graceful cancel lets every started operation end.
	exp := pp.export("many", in.env)
	inPulumi := map[string]bool{}
	for _, r := range exp.Resources {
		inPulumi[r.URN] = true
	}
	var pids []int
	for _, e := range j.entries(t) {
		if !slices.Contains(pids, e.pid) {
			pids = append(pids, e.pid)
		}
		if e.phase != "start" || e.op != op || inPulumi[e.urn] == (op == "create") {
			continue
		}
		name := e.urn[strings.LastIndex(e.urn, "::")+2:]
		if len(in.signals) == 1 {
			t.Errorf("after a graceful cancel, Pulumi's state does not reflect the %s of %s it started", op, e.urn)
		} else if !strings.Contains(r.stderr, "pending") || !strings.Contains(r.stderr, name) {
			t.Errorf("the %s of %s was in flight when Pulumi was killed but is not reported as pending: %s", op, name, r.stderr)
		}
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("the provider process %d outlived the interrupted %s", pid, verb)
		}
	}
}

// converge runs the deploy or destroy again, uninterrupted, and checks that
// it finishes with every component (or none) in both states.
func converge(t *testing.T, pp *pulumiProject, p *project, env string, destroy bool) {
	t.Helper()
	verb, want := "deploy", manyCount
	if destroy {
		verb, want = "destroy", 0
	}
	r := p.mustRun(0, verb, "-e", env, "--yes")
	if n := pp.sameResources("many", env); n != want {
		t.Errorf("the %s after the interrupt should leave %d components, Pulumi holds %d: %s", verb, want, n, r)
	}
	if !destroy {
		if r := p.mustRun(0, "plan", "-e", env); !strings.Contains(r.stdout, "No changes.") {
			t.Errorf("the plan after the converging deploy should show no changes: %s", r)
		}
	}
}

// running reports whether a process runs whose command line has every
// one of args (as whole arguments), from /proc.
func running(args ...string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		argv := strings.Split(string(data), "\x00")
		all := true
		for _, a := range args {
			all = all && slices.Contains(argv, a)
		}
		if all {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds, failing the test when deployer exits
// first (the signal would come too late to test anything).
func waitFor(t *testing.T, d *bgRun, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-d.done:
			t.Fatalf("deployer exited before %s: %s", what, d.res)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestRealPulumiInterrupts interrupts deploys of a 150-component stack with
// SIGINT, two SIGINTs and SIGTERM, each early (few creates finished, many in
// flight) and late (most finished), then destroys of it, each followed by the
// run that converges. Every case has an environment of its own: they share
// the project, the binary and the provider.
func TestRealPulumiInterrupts(t *testing.T) {
	pp := newPulumiProject(t)
	early, late := 10, 120
	deploys := []interrupt{
		{name: "sigint-early", signals: []syscall.Signal{syscall.SIGINT}, after: early},
		{name: "sigint-late", signals: []syscall.Signal{syscall.SIGINT}, after: late},
		{name: "double-sigint-early", signals: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, after: early},
		{name: "double-sigint-late", signals: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, after: late},
		{name: "double-sigint-during-export", signals: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, after: late, duringExport: true},
		{name: "sigterm-early", signals: []syscall.Signal{syscall.SIGTERM}, after: early},
		{name: "sigterm-late", signals: []syscall.Signal{syscall.SIGTERM}, after: late},
	}
	var envs []string
	for i := range deploys {
		deploys[i].env = fmt.Sprintf("e%d", i+1)
		envs = append(envs, deploys[i].env)
	}
	p := pp.stack("many", manyYAML(envs, -1))
	for _, in := range deploys {
		t.Run(in.name, func(t *testing.T) {
			pp.t, p.t = t, t
			in.run(t, pp, p)
			converge(t, pp, p, in.env, false)
		})
	}
	destroys := []interrupt{
		{name: "destroy-sigint", env: "e1", destroy: true, signals: []syscall.Signal{syscall.SIGINT}, after: late},
		{name: "destroy-double-sigint", env: "e2", destroy: true, signals: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, after: early},
	}
	for _, in := range destroys {
		t.Run(in.name, func(t *testing.T) {
			pp.t, p.t = t, t
			in.run(t, pp, p)
			converge(t, pp, p, in.env, true)
		})
	}

	// A deploy that fails part way: one resource's create fails, Pulumi
	// lets what is in flight end and stops.
	t.Run("provider-error", func(t *testing.T) {
		pp.t, p.t = t, t
		envs := append(envs, "failing")
		p.write("deployer.yaml", manyYAML(envs, 75))
		j := providerJournal(filepath.Join(pp.dir, "failing.journal"))
		p.env = []string{"DEPLOYERTEST_DELAY=100ms", "DEPLOYERTEST_JOURNAL=" + string(j)}
		r := p.mustRun(1, "deploy", "-e", "failing", "--yes")
		p.env = nil
		if !strings.Contains(r.stderr, "quota exceeded for pets") {
			t.Errorf("the deploy should fail with the provider's error: %s", r)
		}
		if locks := p.locks(); len(locks) != 0 {
			t.Fatalf("the failed deploy left its lock: %+v", locks)
		}
		pp.sameResources("many", "failing")
		for _, e := range j.entries(t) {
			if !gone(e.pid) {
				t.Errorf("the provider process %d outlived the failed deploy", e.pid)
			}
		}
		p.write("deployer.yaml", manyYAML(envs, -1))
		converge(t, pp, p, "failing", false)
	})
	pp.t, p.t = t, t
}

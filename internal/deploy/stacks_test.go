package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// journal records the start and end of every stack's engine call, in the
// order they happen: a logical clock, no wall time.
type journal struct {
	mu     sync.Mutex
	events []string // "start:left", "end:left"
	// meet makes the named stacks wait in their engine call until all of
	// them are inside it: the run can only finish if they overlap.
	meet map[string]*meeting
	fail map[string]bool
	// block, when set, is closed by the test; stacks in blocked wait for
	// it (or for their context).
	block   chan struct{}
	blocked map[string]bool
	started chan string
}

type meeting struct {
	n       int
	arrived int
	all     chan struct{}
}

func (j *journal) add(ev string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, ev)
	return len(j.events) - 1
}

func (j *journal) at(ev string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Index(j.events, ev)
}

// stackEngine is a Command engine stand-in that writes to the journal.
type stackEngine struct {
	engine.Engine
	j *journal
}

func (e stackEngine) Name() string { return "rec" }
func (e stackEngine) Kinds() []engine.Kind {
	return []engine.Kind{{Name: "Command", Settings: plan.KindSettings{Recorded: func(r *statestore.Resource) (map[string]map[string]any, bool) {
		m, ok := r.ActualState["settings"].(map[string]any) // as loaded from the state file
		out := map[string]map[string]any{}
		for k, v := range m {
			out[k], _ = v.(map[string]any)
		}
		return out, ok
	}}}}
}
func (e stackEngine) Handles(k string) bool                                    { return k == "Command" || k == "StackReference" }
func (e stackEngine) Preflight(context.Context, engine.PreflightRequest) error { return nil }
func (e stackEngine) Kill()                                                    {}
func (e stackEngine) Capabilities() engine.Capabilities                        { return engine.Capabilities{} }
func (e stackEngine) Apply(ctx context.Context, req engine.ApplyRequest) (engine.ApplyResponse, error) {
	rs, err := e.run(ctx, req.Steps, req.Inputs, "ready")
	return engine.ApplyResponse{Results: rs}, err
}
func (e stackEngine) Destroy(ctx context.Context, req engine.DestroyRequest) (engine.DestroyResponse, error) {
	rs, err := e.run(ctx, req.Steps, req.Inputs, "deleted")
	return engine.DestroyResponse{Results: rs}, err
}

func (e stackEngine) run(ctx context.Context, steps []plan.Step, in engine.Inputs, status engine.Status) ([]engine.Result, error) {
	results := func(status engine.Status, err error) []engine.Result {
		var out []engine.Result
		for _, s := range steps {
			out = append(out, engine.Result{Address: s.Address, Action: s.Action, Status: status, Err: err, Outputs: map[string]any{"v": 1},
				ActualState: map[string]any{"settings": s.Settings}})
		}
		return out
	}
	if !slices.ContainsFunc(steps, func(s plan.Step) bool { return s.Kind == "Command" }) {
		return results(status, nil), nil
	}
	j := e.j
	j.add("start:" + in.Stack)
	if j.started != nil {
		j.started <- in.Stack
	}
	defer j.add("end:" + in.Stack)
	j.mu.Lock()
	m := j.meet[in.Stack]
	if m != nil {
		if m.arrived++; m.arrived == m.n {
			close(m.all)
		}
	}
	j.mu.Unlock()
	if m != nil {
		<-m.all
	}
	if j.blocked[in.Stack] {
		select {
		case <-j.block:
		case <-ctx.Done():
			return results("cancelled", ctx.Err()), ctx.Err()
		}
	}
	if j.fail[in.Stack] {
		err := fmt.Errorf("exit status 1")
		return results("failed", err), err
	}
	return results(status, nil), nil
}

// diamond is root -> left, right -> leaf plus alone, sharing file backends.
type diamond struct {
	t     *testing.T
	root  string
	back  string
	set   *stacks.Set
	j     *journal
	locks *lockmgr.Manager
}

func newDiamond(t *testing.T) *diamond {
	t.Helper()
	d := &diamond{t: t, root: t.TempDir(), j: &journal{meet: map[string]*meeting{}, fail: map[string]bool{}, blocked: map[string]bool{}}}
	d.back = filepath.Join(d.root, ".deployer")
	for name, refs := range map[string][]string{"root": nil, "left": {"root"}, "right": {"root"}, "leaf": {"left", "right"}, "alone": nil} {
		y := fmt.Sprintf("stack: %s\nbackend: {state: file://%s, lock: file://%s}\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n      c:\n        kind: Command\n        command: {create: \"true\", delete: \"true\"}\n", name, d.back, d.back)
		for _, r := range refs {
			y += fmt.Sprintf("      from-%s:\n        kind: StackReference\n        config: {stack: %s}\n", r, r)
		}
		if err := os.MkdirAll(filepath.Join(d.root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.root, name, "deployer.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d.reload()
	lb, err := filelock.New(d.back)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lb.Close() })
	d.locks = lockmgr.NewManager(lb, lockmgr.Options{})
	return d
}

// reload discovers the stacks again (after a deployer.yaml changed).
func (d *diamond) reload() {
	d.t.Helper()
	set, err := stacks.Discover(d.root, stacks.Options{Env: "dev", Load: func(p string) (*config.Config, error) { return config.Load(p) }})
	if err != nil {
		d.t.Fatal(err)
	}
	d.set = set
}

func (d *diamond) request(op StackOp) StacksRequest {
	return StacksRequest{Set: d.set, Env: "dev", Op: op, Open: func(ctx context.Context, st *stacks.Stack) (*Service, error) {
		sb, err := filestate.New(d.back)
		if err != nil {
			return nil, err
		}
		return New(Deps{Store: statestore.New(sb), Locks: d.locks, Engines: []engine.Engine{stackEngine{j: d.j}},
			Getenv: func(string) string { return "" }}), nil
	}}
}

func (d *diamond) noLocksLeft() {
	d.t.Helper()
	recs, err := d.locks.List(context.Background(), "")
	if err != nil {
		d.t.Fatal(err)
	}
	if len(recs) != 0 {
		d.t.Errorf("locks left: %+v", recs)
	}
}

func statuses(rs []StackResult) string {
	var out []string
	for _, r := range rs {
		s := r.Stack + "=" + string(r.Status)
		if r.Reason != "" && r.Status == StackSkipped {
			s += " (" + r.Reason + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func TestRunStacksDeploysInDependencyOrderAndOverlapsIndependentStacks(t *testing.T) {
	d := newDiamond(t)
	// left and right wait inside their apply until both are there, and so
	// do alone and root: the run finishes only if each pair overlaps.
	for _, pair := range [][]string{{"left", "right"}, {"alone", "root"}} {
		m := &meeting{n: 2, all: make(chan struct{})}
		for _, s := range pair {
			d.j.meet[s] = m
		}
	}
	var reported []string
	req := d.request(OpDeploy)
	req.OnDone = func(r StackResult) { reported = append(reported, r.Stack) }
	res, err := RunStacks(context.Background(), req)
	if err != nil {
		t.Fatalf("%v: %s\n%+v", err, statuses(res), res)
	}
	if got := statuses(res); got != "alone=applied, root=applied, left=applied, right=applied, leaf=applied" {
		t.Fatalf("results = %s\n%+v", got, res)
	}
	j := d.j
	for _, c := range [][2]string{{"end:root", "start:left"}, {"end:root", "start:right"}, {"end:left", "start:leaf"}, {"end:right", "start:leaf"}} {
		if j.at(c[0]) > j.at(c[1]) {
			t.Errorf("%s after %s: %v", c[0], c[1], j.events)
		}
	}
	if reported[len(reported)-1] != "leaf" || len(reported) != 5 {
		t.Errorf("OnDone order = %v, want leaf last", reported)
	}
	d.noLocksLeft()

	// Nothing changed: a second run applies nothing.
	res, err = RunStacks(context.Background(), d.request(OpDeploy))
	if err != nil || !strings.Contains(statuses(res), "leaf=no-changes") || strings.Contains(statuses(res), "applied") {
		t.Fatalf("second deploy: %v, %s", err, statuses(res))
	}
}

func TestRunStacksWithParallelismOneRunsOneStackAtATime(t *testing.T) {
	d := newDiamond(t)
	req := d.request(OpDeploy)
	req.Parallelism = 1
	if res, err := RunStacks(context.Background(), req); err != nil {
		t.Fatalf("%v: %s\n%+v", err, statuses(res), res)
	}
	for i := 0; i < len(d.j.events); i += 2 {
		s, e := d.j.events[i], d.j.events[i+1]
		if !strings.HasPrefix(s, "start:") || e != "end:"+strings.TrimPrefix(s, "start:") {
			t.Fatalf("stacks overlapped with parallelism 1: %v", d.j.events)
		}
	}
}

func TestRunStacksFailureSkipsOnlyTheConsumers(t *testing.T) {
	d := newDiamond(t)
	d.j.fail["left"] = true
	res, err := RunStacks(context.Background(), d.request(OpDeploy))
	var se *StacksError
	if !errors.As(err, &se) || !slices.Equal(se.Failed, []string{"left"}) || errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want left failed", err)
	}
	if got := statuses(res); got != "alone=applied, root=applied, left=failed, right=applied, leaf=skipped (producer left failed)" {
		t.Fatalf("results = %s\n%+v", got, res)
	}
	if d.j.at("start:leaf") >= 0 {
		t.Error("leaf ran after its producer failed")
	}
	d.noLocksLeft()
}

func TestRunStacksDestroysConsumersFirst(t *testing.T) {
	d := newDiamond(t)
	if _, err := RunStacks(context.Background(), d.request(OpDeploy)); err != nil {
		t.Fatal(err)
	}
	d.j.events = nil
	d.j.fail["right"] = true
	res, err := RunStacks(context.Background(), d.request(OpDestroy))
	if err == nil {
		t.Fatal("want right's failure")
	}
	if got := statuses(res); got != "alone=destroyed, root=skipped (consumer right failed), left=destroyed, right=failed, leaf=destroyed" {
		t.Fatalf("results = %s\n%+v", got, res)
	}
	if d.j.at("end:leaf") > d.j.at("start:left") || d.j.at("end:leaf") > d.j.at("start:right") {
		t.Errorf("leaf must be destroyed before left and right: %v", d.j.events)
	}
	d.noLocksLeft()
}

func TestRunStacksCancelledStartsNothingMoreAndReleasesLocks(t *testing.T) {
	d := newDiamond(t)
	d.j.blocked["root"], d.j.blocked["alone"] = true, true
	d.j.block = make(chan struct{})
	d.j.started = make(chan string, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-d.j.started
		<-d.j.started // root and alone are both applying
		cancel()
	}()
	res, err := RunStacks(ctx, d.request(OpDeploy))
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	want := "alone=cancelled, root=cancelled, left=skipped (cancelled before it started), right=skipped (cancelled before it started), leaf=skipped (cancelled before it started)"
	if got := statuses(res); got != want {
		t.Fatalf("results = %s\nwant      %s", got, want)
	}
	d.noLocksLeft()
}

func TestRunStacksPlanMarksConsumersOfChangedProducers(t *testing.T) {
	d := newDiamond(t)
	req := d.request(OpPlan)
	var shown []string
	var mu sync.Mutex
	req.ShowPlan = func(st *stacks.Stack, p *plan.Plan) error {
		mu.Lock()
		defer mu.Unlock()
		shown = append(shown, st.Name)
		return nil
	}
	res, err := RunStacks(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := "alone=changes, root=changes, left=skipped (reads root, which has no state yet: deploy --all creates it first, then plans this stack), " +
		"right=skipped (reads root, which has no state yet: deploy --all creates it first, then plans this stack), " +
		"leaf=skipped (producer left was skipped: reads root, which has no state yet: deploy --all creates it first, then plans this stack)"
	got := statuses(res)
	got = strings.Replace(got, "producer right was skipped", "producer left was skipped", 1) // whichever finished first
	if got != want {
		t.Fatalf("first plan --all = %s\nwant %s", got, want)
	}
	if _, err := RunStacks(context.Background(), d.request(OpDeploy)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.root, "root", "deployer.yaml"), []byte(strings.Replace(string(must(os.ReadFile(filepath.Join(d.root, "root", "deployer.yaml")))), "create: \"true\"", "create: \"true \"", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	d.reload()
	req.Set = d.set
	shown = nil
	res, err = RunStacks(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res); got != "alone=no-changes, root=changes, left=no-changes, right=no-changes, leaf=no-changes" {
		t.Fatalf("plan --all after root's change = %s", got)
	}
	if left, leaf := res[2], res[4]; !slices.Equal(left.Stale, []string{"root"}) || !slices.Equal(leaf.Stale, []string{"left", "right"}) || res[0].Stale != nil {
		t.Errorf("Stale: left %v, leaf %v, alone %v: want root for left, left and right (through root) for leaf, nothing for alone",
			left.Stale, leaf.Stale, res[0].Stale)
	}
	if len(shown) != 5 {
		t.Errorf("plan showed %v", shown)
	}
	// Only (--changed-since) runs the named stacks.
	req.Only = map[string]bool{"left": true, "leaf": true}
	res, _ = RunStacks(context.Background(), req)
	if got := statuses(res); got != "left=no-changes, leaf=no-changes" {
		t.Fatalf("only left and leaf: %s", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A --all run acts on the stacks that declare the environment, in
// dependency order; destroy goes readers first; an environment no stack
// declares is a usage error.
func TestSelectStacks(t *testing.T) {
	d := newDiamond(t)
	load := func(p string) (*config.Config, error) { return config.Load(p) }
	sel, err := SelectStacks(context.Background(), SelectRequest{Root: d.root, Env: "dev", Op: OpDeploy, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	deployOrder, destroyOrder := sel.Order(OpDeploy), sel.Order(OpDestroy)
	before := func(order []string, a, b string) bool { return slices.Index(order, a) < slices.Index(order, b) }
	if !before(deployOrder, "root", "left") || !before(deployOrder, "left", "leaf") || !before(destroyOrder, "leaf", "right") ||
		!before(destroyOrder, "right", "root") || len(destroyOrder) != 5 {
		t.Errorf("deploy order %v, destroy order %v", deployOrder, destroyOrder)
	}
	_, err = SelectStacks(context.Background(), SelectRequest{Root: d.root, Env: "prod", Op: OpPlan, Load: load})
	var te *TargetError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `declares environment "prod"`) {
		t.Errorf("unknown environment: %v (%T), want a *TargetError", err, err)
	}
}

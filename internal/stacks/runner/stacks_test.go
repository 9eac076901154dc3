package runner

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
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/deploytest"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

func request(d *deploytest.Diamond, op StackOp) StacksRequest {
	return StacksRequest{Set: d.Set, Env: "dev", Op: op, Open: func(ctx context.Context, st *stacks.Stack, ui deploy.UI) (*deploy.Service, error) {
		sb, err := filestate.New(d.Back)
		if err != nil {
			return nil, err
		}
		return deploy.New(deploy.Deps{Deps: core.Deps{Store: statestore.New(sb), Locks: d.Locks, Getenv: func(string) string { return "" }}, Engines: []engine.Engine{deploytest.Engine{J: d.J}}, UI: ui}), nil
	}}
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
	d := deploytest.NewDiamond(t)
	// left and right wait inside their apply until both are there, and so
	// do alone and root: the run finishes only if each pair overlaps.
	for _, pair := range [][]string{{"left", "right"}, {"alone", "root"}} {
		m := &deploytest.Meeting{N: 2, All: make(chan struct{})}
		for _, s := range pair {
			d.J.Meet[s] = m
		}
	}
	var reported []string
	req := request(d, OpDeploy)
	req.OnDone = func(r StackResult) { reported = append(reported, r.Stack) }
	res, err := RunStacks(context.Background(), req)
	if err != nil {
		t.Fatalf("%v: %s\n%+v", err, statuses(res), res)
	}
	if got := statuses(res); got != "alone=applied, root=applied, left=applied, right=applied, leaf=applied" {
		t.Fatalf("results = %s\n%+v", got, res)
	}
	j := d.J
	for _, c := range [][2]string{{"end:root", "start:left"}, {"end:root", "start:right"}, {"end:left", "start:leaf"}, {"end:right", "start:leaf"}} {
		if j.At(c[0]) > j.At(c[1]) {
			t.Errorf("%s after %s: %v", c[0], c[1], j.Events)
		}
	}
	if reported[len(reported)-1] != "leaf" || len(reported) != 5 {
		t.Errorf("OnDone order = %v, want leaf last", reported)
	}
	d.NoLocksLeft()

	// Nothing changed: a second run applies nothing.
	res, err = RunStacks(context.Background(), request(d, OpDeploy))
	if err != nil || !strings.Contains(statuses(res), "leaf=no-changes") || strings.Contains(statuses(res), "applied") {
		t.Fatalf("second deploy: %v, %s", err, statuses(res))
	}
}

func TestRunStacksWithParallelismOneRunsOneStackAtATime(t *testing.T) {
	d := deploytest.NewDiamond(t)
	req := request(d, OpDeploy)
	req.Parallelism = 1
	if res, err := RunStacks(context.Background(), req); err != nil {
		t.Fatalf("%v: %s\n%+v", err, statuses(res), res)
	}
	for i := 0; i < len(d.J.Events); i += 2 {
		s, e := d.J.Events[i], d.J.Events[i+1]
		if !strings.HasPrefix(s, "start:") || e != "end:"+strings.TrimPrefix(s, "start:") {
			t.Fatalf("stacks overlapped with parallelism 1: %v", d.J.Events)
		}
	}
}

func TestRunStacksFailureSkipsOnlyTheConsumers(t *testing.T) {
	d := deploytest.NewDiamond(t)
	d.J.Fail["left"] = true
	res, err := RunStacks(context.Background(), request(d, OpDeploy))
	var se *StacksError
	if !errors.As(err, &se) || !slices.Equal(se.Failed, []string{"left"}) || errors.Is(err, deploy.ErrCancelled) {
		t.Fatalf("err = %v, want left failed", err)
	}
	if got := statuses(res); got != "alone=applied, root=applied, left=failed, right=applied, leaf=skipped (producer left failed)" {
		t.Fatalf("results = %s\n%+v", got, res)
	}
	if d.J.At("start:leaf") >= 0 {
		t.Error("leaf ran after its producer failed")
	}
	d.NoLocksLeft()
}

func TestRunStacksDestroysConsumersFirst(t *testing.T) {
	d := deploytest.NewDiamond(t)
	if _, err := RunStacks(context.Background(), request(d, OpDeploy)); err != nil {
		t.Fatal(err)
	}
	d.J.Events = nil
	d.J.Fail["right"] = true
	res, err := RunStacks(context.Background(), request(d, OpDestroy))
	if err == nil {
		t.Fatal("want right's failure")
	}
	if got := statuses(res); got != "alone=destroyed, root=skipped (consumer right failed), left=destroyed, right=failed, leaf=destroyed" {
		t.Fatalf("results = %s\n%+v", got, res)
	}
	if d.J.At("end:leaf") > d.J.At("start:left") || d.J.At("end:leaf") > d.J.At("start:right") {
		t.Errorf("leaf must be destroyed before left and right: %v", d.J.Events)
	}
	d.NoLocksLeft()
}

func TestRunStacksCancelledStartsNothingMoreAndReleasesLocks(t *testing.T) {
	d := deploytest.NewDiamond(t)
	d.J.Blocked["root"], d.J.Blocked["alone"] = true, true
	d.J.Block = make(chan struct{})
	d.J.Started = make(chan string, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-d.J.Started
		<-d.J.Started // root and alone are both applying
		cancel()
	}()
	res, err := RunStacks(ctx, request(d, OpDeploy))
	if !errors.Is(err, deploy.ErrCancelled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	want := "alone=cancelled, root=cancelled, left=skipped (cancelled before it started), right=skipped (cancelled before it started), leaf=skipped (cancelled before it started)"
	if got := statuses(res); got != want {
		t.Fatalf("results = %s\nwant      %s", got, want)
	}
	d.NoLocksLeft()
}

func TestRunStacksPlanMarksConsumersOfChangedProducers(t *testing.T) {
	d := deploytest.NewDiamond(t)
	req := request(d, OpPlan)
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
	if _, err := RunStacks(context.Background(), request(d, OpDeploy)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Root, "root", "deployer.yaml"), []byte(strings.Replace(string(must(os.ReadFile(filepath.Join(d.Root, "root", "deployer.yaml")))), "create: \"true\"", "create: \"true \"", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Reload()
	req.Set = d.Set
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
	d := deploytest.NewDiamond(t)
	load := func(p string) (*config.Config, error) { return config.Load(p) }
	sel, err := SelectStacks(context.Background(), SelectRequest{Root: d.Root, Env: "dev", Op: OpDeploy, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	deployOrder, destroyOrder := sel.Order(OpDeploy), sel.Order(OpDestroy)
	before := func(order []string, a, b string) bool { return slices.Index(order, a) < slices.Index(order, b) }
	if !before(deployOrder, "root", "left") || !before(deployOrder, "left", "leaf") || !before(destroyOrder, "leaf", "right") ||
		!before(destroyOrder, "right", "root") || len(destroyOrder) != 5 {
		t.Errorf("deploy order %v, destroy order %v", deployOrder, destroyOrder)
	}
	_, err = SelectStacks(context.Background(), SelectRequest{Root: d.Root, Env: "prod", Op: OpPlan, Load: load})
	var te *deploy.TargetError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `declares environment "prod"`) {
		t.Errorf("unknown environment: %v (%T), want a *deploy.TargetError", err, err)
	}
}

// deploy --all and plan --all check each stack's plan: a denied stack
// runs no engine and skips the stacks that read it, as a failed one does;
// the others go on. A deploy run with denied stacks and no failed one is
// a *policy.DeniedError (exit 5); a plan run is not an error.
func TestRunStacksDeniedStackSkipsItsReaders(t *testing.T) {
	for _, op := range []StackOp{OpDeploy, OpPlan} {
		t.Run(string(op), func(t *testing.T) {
			d := deploytest.NewDiamond(t)
			if op == OpPlan { // every stack deployed: each has a state to plan against
				if _, err := RunStacks(context.Background(), request(d, OpDeploy)); err != nil {
					t.Fatal(err)
				}
			}
			req := request(d, op)
			check := &deploy.PolicyCheck{Dirs: []string{deploytest.PolicyDir(t, fmt.Sprintf(deploytest.DenyStacks, `{"left"}`))}}
			var mu sync.Mutex
			var asked []string
			req.Policy = func(_ context.Context, st *stacks.Stack) (*deploy.PolicyCheck, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, st.Name)
				return check, nil
			}
			res, err := RunStacks(context.Background(), req)
			want := "alone=applied, root=applied, left=denied, right=applied, leaf=skipped (producer left denied)"
			if op == OpPlan {
				want = strings.ReplaceAll(want, "applied", "no-changes")
			}
			if got := statuses(res); got != want {
				t.Fatalf("results = %s, want %s", got, want)
			}
			if slices.Contains(d.J.Events, "start:left") && op == OpDeploy || len(asked) != 4 {
				t.Errorf("engine events %v, policies asked for %v", d.J.Events, asked)
			}
			var denied *policy.DeniedError
			switch {
			case op == OpPlan && err != nil:
				t.Errorf("plan --all with a denied stack: %v", err)
			case op == OpDeploy && (!errors.As(err, &denied) || err.Error() != "1 stack(s) denied by policy: left; the stacks that read them were skipped"):
				t.Errorf("deploy --all error %v, want the denied stacks and a *policy.DeniedError", err)
			case op == OpDeploy && denied.Error() != "denied by policy: frozen (stack left): left is frozen":
				t.Errorf("denied: %v", denied)
			}
			d.NoLocksLeft()
		})
	}
}

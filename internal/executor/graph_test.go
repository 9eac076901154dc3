package executor

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// recEngine records its calls. It batches (like Pulumi); wrapped in
// concurrentEngine it takes one step per call (like Command).
type recEngine struct {
	engine.Engine // nil: the methods the apply graph does not call (Kinds, Preflight, ...)
	kind          string
	outputs       func(addr string) map[string]any

	mu       sync.Mutex
	calls    [][]string // addresses per call, in call order
	keeps    [][]string
	inflight atomic.Int32
	maxIn    atomic.Int32
}

func (e *recEngine) Name() string             { return e.kind }
func (e *recEngine) Handles(kind string) bool { return kind == e.kind }
func (e *recEngine) Apply(_ context.Context, req engine.ApplyRequest) (engine.ApplyResponse, error) {
	steps, in := req.Steps, req.Inputs
	n := e.inflight.Add(1)
	defer e.inflight.Add(-1)
	for {
		m := e.maxIn.Load()
		if n <= m || e.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	var addrs, keep []string
	var rs []engine.Result
	for _, s := range steps {
		addrs = append(addrs, s.Address)
		out := map[string]any{"id": s.Address}
		if e.outputs != nil {
			out = e.outputs(s.Address)
		}
		rs = append(rs, engine.Result{Address: s.Address, Action: s.Action, Status: "ready", Outputs: out})
	}
	for _, k := range in.Keep {
		keep = append(keep, k.Address)
	}
	e.mu.Lock()
	e.calls = append(e.calls, addrs)
	e.keeps = append(e.keeps, keep)
	e.mu.Unlock()
	return engine.ApplyResponse{Results: rs}, nil
}
func (e *recEngine) Destroy(ctx context.Context, req engine.DestroyRequest) (engine.DestroyResponse, error) {
	resp, err := e.Apply(ctx, engine.ApplyRequest(req))
	return engine.DestroyResponse(resp), err
}

// Kinds is empty: no config path forces a replace in these tests.
func (e *recEngine) Kinds() []engine.Kind { return nil }

func (e *recEngine) Capabilities() engine.Capabilities { return engine.Capabilities{} }

type concurrentEngine struct{ *recEngine }

func (concurrentEngine) Capabilities() engine.Capabilities {
	return engine.Capabilities{ConcurrentSteps: true}
}

func step(addr, kind string, action plan.Action, deps ...string) plan.Step {
	svc, comp, _ := strings.Cut(addr, "/")
	return plan.Step{Address: addr, Service: svc, Component: comp, Kind: kind, Action: action,
		DependsOn: deps, InputDeps: plan.InputDeps(deps), Config: map[string]any{}}
}

func planOf(steps ...plan.Step) *plan.Plan {
	p := &plan.Plan{Steps: steps}
	for _, s := range steps {
		if s.Action == plan.NoOp {
			p.Summary.NoOp++
		}
		if s.Reevaluate {
			p.Summary.Reevaluate++
		}
	}
	return p
}

// The graph between Command and Pulumi components holds both ways: a
// Pulumi component behind a Command one waits for it (a second Pulumi
// batch), whose program keeps the Pulumi components the first one created.
func TestBatchesFollowTheGraphAcrossEngines(t *testing.T) {
	pul := &recEngine{kind: "P"}
	cmd := concurrentEngine{&recEngine{kind: "C"}}
	s := &Executor{Engines: []engine.Engine{pul, cmd}}
	p := planOf(
		step("p/a", "P", plan.Create),
		step("p/d", "P", plan.Create),
		step("c/b", "C", plan.Create, "p/a"),
		step("p/c", "P", plan.Create, "c/b"),
	)
	run, err := s.Apply(context.Background(), Request{Plan: p, State: statestore.NewState("s", "e"), Inputs: engine.Inputs{}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"p/a", "p/d"}, {"p/c"}}; !slices.EqualFunc(pul.calls, want, slices.Equal) {
		t.Errorf("Pulumi calls = %v, want %v", pul.calls, want)
	}
	if want := []string{"p/a", "p/d"}; !slices.Equal(pul.keeps[1], want) {
		t.Errorf("second batch keeps %v, want %v (created earlier in this run)", pul.keeps[1], want)
	}
	if len(run.Results) != 4 || run.Inputs["c/b"].Dependencies["p/a"]["id"] != "p/a" {
		t.Errorf("results %v, inputs of c/b %v", run.Results, run.Inputs["c/b"])
	}
}

// Pulumi components that depend only on each other go in one batch (one
// `pulumi up`); re-evaluated ones whose inputs come out equal are dropped
// from the results and reported unchanged.
func TestOnePulumiBatchAndReevaluatedComponentsSettleAfterIt(t *testing.T) {
	pul := &recEngine{kind: "P", outputs: func(addr string) map[string]any { return map[string]any{"id": addr + "-1"} }}
	s := &Executor{Engines: []engine.Engine{pul}}
	st := statestore.NewState("s", "e")
	for _, a := range []string{"p/a", "p/b", "p/c"} {
		st.Resources[a] = &statestore.Resource{Kind: "P", Outputs: map[string]any{"id": a + "-1"}}
	}
	b := step("p/b", "P", plan.NoOp, "p/a")
	b.Reevaluate, b.InputsFrom, b.Prior = true, []string{"p/a"}, st.Resources["p/b"]
	c := step("p/c", "P", plan.NoOp, "p/b")
	c.Reevaluate, c.InputsFrom, c.Prior = true, []string{"p/b"}, st.Resources["p/c"]
	a := step("p/a", "P", plan.Update)
	a.Prior = st.Resources["p/a"]
	run, err := s.Apply(context.Background(), Request{Plan: planOf(a, b, c), State: st, Inputs: engine.Inputs{Outputs: outputsOf(st)}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"p/a", "p/b", "p/c"}}; !slices.EqualFunc(pul.calls, want, slices.Equal) {
		t.Errorf("Pulumi calls = %v, want one batch %v", pul.calls, want)
	}
	if len(run.Results) != 1 || run.Results[0].Address != "p/a" || !slices.Equal(run.Unchanged, []string{"p/b", "p/c"}) {
		t.Errorf("results %v unchanged %v; want p/a applied, p/b and p/c unchanged", run.Results, run.Unchanged)
	}
}

func TestParallelismBoundsConcurrentCalls(t *testing.T) {
	for _, limit := range []int{1, 3} {
		cmd := concurrentEngine{&recEngine{kind: "C"}}
		s := &Executor{Engines: []engine.Engine{cmd}}
		var steps []plan.Step
		for _, a := range []string{"s/a", "s/b", "s/c", "s/d", "s/e", "s/f"} {
			steps = append(steps, step(a, "C", plan.Create))
		}
		if _, err := s.Apply(context.Background(), Request{Plan: planOf(steps...), State: statestore.NewState("s", "e"), Inputs: engine.Inputs{}, Limit: limit}); err != nil {
			t.Fatal(err)
		}
		if m := cmd.maxIn.Load(); int(m) > limit {
			t.Errorf("parallelism %d: %d calls ran at once", limit, m)
		}
		if len(cmd.calls) != 6 {
			t.Errorf("parallelism %d: %d calls, want 6", limit, len(cmd.calls))
		}
		if limit == 1 {
			var order []string
			for _, c := range cmd.calls {
				order = append(order, c...)
			}
			if !slices.IsSorted(order) {
				t.Errorf("parallelism 1 ran %v, want plan order", order)
			}
		}
	}
}

// A state written before inputs were recorded: a re-evaluated component is
// compared with its dependency's outputs as the state had them.
func TestReevaluationWithoutRecordedInputsUsesTheStateOutputs(t *testing.T) {
	for _, tc := range []struct {
		newID   string
		applied []string
	}{
		{"a-1", []string{"s/a"}},        // a's outputs came out as before: b left alone
		{"a-2", []string{"s/a", "s/b"}}, // they moved: b updated
	} {
		cmd := concurrentEngine{&recEngine{kind: "C", outputs: func(addr string) map[string]any {
			if addr == "s/a" {
				return map[string]any{"id": tc.newID}
			}
			return map[string]any{"id": addr}
		}}}
		s := &Executor{Engines: []engine.Engine{cmd}}
		st := statestore.NewState("s", "e")
		st.Resources["s/a"] = &statestore.Resource{Kind: "C", Outputs: map[string]any{"id": "a-1"}}
		st.Resources["s/b"] = &statestore.Resource{Kind: "C", Outputs: map[string]any{"id": "s/b"}} // no Inputs
		a := step("s/a", "C", plan.Update)
		a.Prior = st.Resources["s/a"]
		b := step("s/b", "C", plan.NoOp, "s/a")
		b.Reevaluate, b.InputsFrom, b.Prior = true, []string{"s/a"}, st.Resources["s/b"]
		run, err := s.Apply(context.Background(), Request{Plan: planOf(a, b), State: st, Inputs: engine.Inputs{Outputs: outputsOf(st)}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cmd.calls {
			got = append(got, c...)
		}
		if !slices.Equal(got, tc.applied) {
			t.Errorf("a's new id %s: applied %v, want %v", tc.newID, got, tc.applied)
		}
		if len(tc.applied) == 2 && run.Inputs["s/b"].Dependencies["s/a"]["id"] != "a-2" {
			t.Errorf("b's recorded inputs %v", run.Inputs["s/b"])
		}
	}
}

// outputsOf is the outputs of st's components, as an apply starts with them.
func outputsOf(st *statestore.State) map[string]map[string]any {
	out := make(map[string]map[string]any, len(st.Resources))
	for addr, r := range st.Resources {
		out[addr] = maps.Clone(r.Outputs)
	}
	return out
}

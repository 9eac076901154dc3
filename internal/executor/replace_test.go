package executor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// stepEngine records every step it is handed and fails the addresses in
// fail. It batches unless concurrent.
type stepEngine struct {
	engine.Engine // nil: the methods the apply graph does not call
	kind          string
	concurrent    bool
	fail          map[string]bool

	mu    sync.Mutex
	steps []plan.Step
}

func (e *stepEngine) Name() string             { return "engine-" + e.kind }
func (e *stepEngine) Kinds() []engine.Kind     { return nil }
func (e *stepEngine) Handles(kind string) bool { return kind == e.kind }
func (e *stepEngine) Capabilities() engine.Capabilities {
	return engine.Capabilities{ConcurrentSteps: e.concurrent}
}
func (e *stepEngine) Apply(_ context.Context, req engine.ApplyRequest) (engine.ApplyResponse, error) {
	steps := req.Steps
	e.mu.Lock()
	e.steps = append(e.steps, steps...)
	e.mu.Unlock()
	var rs []engine.Result
	for _, s := range steps {
		r := engine.Result{Address: s.Address, Action: s.Action, Status: engine.StatusReady, Outputs: map[string]any{"by": e.kind}}
		if s.Action == plan.Delete {
			r.Status, r.Outputs = engine.StatusDeleted, nil
		}
		if e.fail[s.Address] {
			r.Status, r.Outputs, r.Err = engine.StatusFailed, nil, errors.New(s.Address+" failed in "+e.kind)
			return engine.ApplyResponse{Results: append(rs, r)}, r.Err
		}
		rs = append(rs, r)
	}
	return engine.ApplyResponse{Results: rs}, nil
}

// replaceAcross is a plan where x/thing, a P (batch engine) component that
// depends on p/base, becomes a C (one step per call) component, and
// c/after depends on it; and the state it was made against.
func replaceAcross() (*plan.Plan, *statestore.State) {
	st := statestore.NewState("s", "e")
	prior := &statestore.Resource{Kind: "P", Status: statestore.ResourceReady, DesiredConfig: map[string]any{"size": 1.0},
		EngineData: statestore.EngineData(`{"urn":"urn:x"}`), Outputs: map[string]any{"id": "old"}, Dependencies: []string{"p/base"}}
	st.Resources["x/thing"] = prior
	st.Resources["p/base"] = &statestore.Resource{Kind: "P", Status: statestore.ResourceReady}
	replace := step("x/thing", "C", plan.Replace, "p/base")
	replace.Prior, replace.PriorSettings = prior, map[string]map[string]any{"spec": {"teardown": "./down.sh"}}
	replace.Diffs = []plan.FieldDiff{{Path: plan.PathKind, Old: "P", New: "C", Op: plan.OpChange, ForcesReplacement: true}}
	base := step("p/base", "P", plan.NoOp)
	base.Prior = st.Resources["p/base"]
	p := planOf(base, replace, step("c/after", "C", plan.Create, "x/thing"))
	p.Summary.Replace, p.Summary.Create = 1, 1
	return p, st
}

// A replace whose old kind is another engine's is that engine's delete of
// the existing instance (its state entry and recorded settings), then the
// new kind's engine's create, before the step's dependents; it is one
// replace in the results, the state and the summary.
func TestReplaceAcrossEnginesDeletesWithTheOldEngineFirst(t *testing.T) {
	pe, ce := &stepEngine{kind: "P"}, &stepEngine{kind: "C", concurrent: true}
	s := &Executor{Engines: []engine.Engine{pe, ce}}
	p, st := replaceAcross()
	if err := s.MarkDeletedBy(p); err != nil {
		t.Fatal(err)
	}
	if p.Steps[1].DeletedBy != "engine-P" || p.Steps[2].DeletedBy != "" {
		t.Errorf("deleted_by = %q, %q; want engine-P on the replace only", p.Steps[1].DeletedBy, p.Steps[2].DeletedBy)
	}
	run, err := s.Apply(context.Background(), Request{Plan: p, State: st, Inputs: engine.Inputs{}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(pe.steps) != 1 {
		t.Fatalf("engine P got %d steps, want the delete of x/thing only", len(pe.steps))
	}
	del := pe.steps[0]
	if del.Address != "x/thing" || del.Action != plan.Delete || del.Kind != "P" || del.Prior != st.Resources["x/thing"] ||
		del.Settings["spec"]["teardown"] != "./down.sh" || del.Config["size"] != 1.0 {
		t.Errorf("engine P got %+v, want the delete of the existing P instance with its recorded settings and config", del)
	}
	var got []string
	for _, s := range ce.steps {
		got = append(got, s.Address+" "+string(s.Action))
		if s.Address == "x/thing" && (s.Kind != "C" || s.Prior != nil || s.PriorSettings != nil) {
			t.Errorf("engine C got %+v, want a create of the C instance that knows nothing of P's", s)
		}
	}
	if want := []string{"x/thing create", "c/after create"}; !slices.Equal(got, want) {
		t.Errorf("engine C got %v, want %v (after P's delete)", got, want)
	}
	if len(run.Results) != 2 || run.Results[0].Address != "x/thing" || run.Results[0].Action != plan.Replace ||
		run.Results[0].Status != engine.StatusReady || !run.Gone["x/thing"] {
		t.Errorf("results %+v, gone %v; want one ready replace of x/thing, then c/after", run.Results, run.Gone)
	}
	cs := run.Changes(p, time.Now(), "dep-1")
	if r := cs.Resources["x/thing"]; r == nil || r.Kind != "C" || r.Status != statestore.ResourceReady || r.EngineData != nil {
		t.Errorf("state of x/thing = %+v, want a ready C entry without P's engine data", r)
	}
	if sum := run.Summarize(cs, len(p.Changes())); sum.Replaced != 1 || sum.Created != 1 || sum.Deleted != 0 || !sum.OK() {
		t.Errorf("summary %+v, want 1 replaced, 1 created", sum)
	}
}

// A failed delete of the existing instance stops the create and the
// dependents; the state keeps the old instance, marked failed, so the next
// plan replaces it again. A create that fails after the delete leaves the
// state holding neither: the old one is gone, the new one not made.
func TestReplaceAcrossEnginesFailures(t *testing.T) {
	t.Run("delete fails", func(t *testing.T) {
		pe := &stepEngine{kind: "P", fail: map[string]bool{"x/thing": true}}
		ce := &stepEngine{kind: "C", concurrent: true}
		s := &Executor{Engines: []engine.Engine{pe, ce}}
		p, st := replaceAcross()
		run, err := s.Apply(context.Background(), Request{Plan: p, State: st, Inputs: engine.Inputs{}, Limit: 10})
		if err == nil || len(ce.steps) != 0 {
			t.Fatalf("err %v, engine C got %v; want the delete's failure and no create", err, ce.steps)
		}
		if len(run.Results) != 1 || run.Results[0].Status != engine.StatusFailed || run.Results[0].Action != plan.Replace || run.Gone["x/thing"] {
			t.Errorf("results %+v gone %v; want x/thing's replace failed, the old instance not gone", run.Results, run.Gone)
		}
		cs := run.Changes(p, time.Now(), "dep-1")
		if r := cs.Resources["x/thing"]; r == nil || r.Kind != "P" || r.Status != statestore.ResourceFailed || string(r.EngineData) != `{"urn":"urn:x"}` {
			t.Errorf("state of x/thing = %+v, want the P entry kept, marked failed", r)
		}
		if sum := run.Summarize(cs, len(p.Changes())); len(sum.Failed) != 1 || sum.NotStarted != 1 || sum.Replaced+sum.Deleted != 0 {
			t.Errorf("summary %+v, want 1 failed, 1 not started", sum)
		}
	})
	t.Run("create fails", func(t *testing.T) {
		pe := &stepEngine{kind: "P"}
		ce := &stepEngine{kind: "C", concurrent: true, fail: map[string]bool{"x/thing": true}}
		s := &Executor{Engines: []engine.Engine{pe, ce}}
		p, st := replaceAcross()
		run, err := s.Apply(context.Background(), Request{Plan: p, State: st, Inputs: engine.Inputs{}, Limit: 10})
		if err == nil || len(ce.steps) != 1 {
			t.Fatalf("err %v, engine C got %v; want the create's failure and c/after not started", err, ce.steps)
		}
		if len(run.Results) != 1 || run.Results[0].Status != engine.StatusFailed || !run.Gone["x/thing"] {
			t.Errorf("results %+v gone %v; want x/thing failed, its old instance gone", run.Results, run.Gone)
		}
		cs := run.Changes(p, time.Now(), "dep-1")
		if r, ok := cs.Resources["x/thing"]; !ok || r != nil {
			t.Errorf("state of x/thing = %+v (listed %v), want it removed: neither instance exists", r, ok)
		}
	})
	t.Run("stopped between", func(t *testing.T) {
		// Another component's failure stops new work after the delete:
		// the replace is reported cancelled and the old entry removed.
		pe := &stepEngine{kind: "P", fail: map[string]bool{"p/other": true}}
		ce := &stepEngine{kind: "C", concurrent: true}
		s := &Executor{Engines: []engine.Engine{pe, ce}}
		p, st := replaceAcross()
		p.Steps = slices.Insert(p.Steps, 2, step("p/other", "P", plan.Create)) // in P's batch, after the delete
		run, err := s.Apply(context.Background(), Request{Plan: p, State: st, Inputs: engine.Inputs{}, Limit: 10})
		if err == nil || len(ce.steps) != 0 {
			t.Fatalf("err %v, engine C got %v; want p/other's failure and nothing created", err, ce.steps)
		}
		var thing *engine.Result
		for i := range run.Results {
			if run.Results[i].Address == "x/thing" {
				thing = &run.Results[i]
			}
		}
		if thing == nil || thing.Status != engine.StatusCancelled || !run.Gone["x/thing"] {
			t.Fatalf("results %+v; want x/thing's replace cancelled after its delete", run.Results)
		}
		if r, ok := run.Changes(p, time.Now(), "dep-1").Resources["x/thing"]; !ok || r != nil {
			t.Errorf("state of x/thing = %+v (listed %v), want it removed", r, ok)
		}
	})
}

// Package enginetest is the conformance suite every engine runs, as
// locktest and storetest are for the backends (docs/design.md#engines): an
// engine's test hands Run a Fixture, and the suite takes one component
// through create, no-op, update, replace, delete, refresh and cancel,
// checking what deploy relies on: one Result per step started, statuses,
// outputs, errors, and a prompt return on cancel.
package enginetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"sync"
	"testing"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Fixture is what the suite needs from one engine.
type Fixture struct {
	// New returns a fresh engine for one test.
	New func(t *testing.T) engine.Engine
	// Inputs returns the inputs of a run (Dir, Stack, Env...); Outputs and
	// Progress are set by the suite.
	Inputs func(t *testing.T) engine.Inputs
	// Step returns a step of the engine's kind at address with version v
	// of its desired state (v > 0): applying it yields outputs whose
	// "version" is v (a string or number). Action and Prior are set by
	// the suite.
	Step func(t *testing.T, address string, v int) plan.Step
	// Slow returns a step whose apply blocks until its context is
	// cancelled (the cancel case), and a text its progress shows once it
	// runs; nil skips that case.
	Slow func(t *testing.T, address string) (plan.Step, string)
	// Live reports whether the component at address exists now (outside
	// the engine), to check create and delete really acted.
	Live func(t *testing.T, in engine.Inputs, address string) bool
}

// Run runs every case against f.
func Run(t *testing.T, f Fixture) {
	t.Run("Catalog", func(t *testing.T) { catalog(t, f) })
	t.Run("Lifecycle", func(t *testing.T) { lifecycle(t, f) })
	t.Run("Refresh", func(t *testing.T) { refresh(t, f) })
	if f.Slow != nil {
		t.Run("Cancel", func(t *testing.T) { cancel(t, f) })
	}
}

func catalog(t *testing.T, f Fixture) {
	e := f.New(t)
	if e.Name() == "" {
		t.Error("Name is empty")
	}
	if len(e.Kinds()) == 0 {
		t.Fatal("Kinds is empty: the engine applies no kind")
	}
	for _, k := range e.Kinds() {
		if !e.Handles(k.Name) {
			t.Errorf("Kinds lists %s but Handles(%q) is false", k.Name, k.Name)
		}
	}
	if e.Handles("NoSuchKind") {
		t.Error(`Handles("NoSuchKind") is true`)
	}
}

func inputs(t *testing.T, f Fixture) engine.Inputs {
	in := f.Inputs(t)
	in.Outputs, in.Progress = map[string]map[string]any{}, io.Discard
	return in
}

// one applies a single step and checks it gave one Result of status want.
func one(t *testing.T, e engine.Engine, st plan.Step, in engine.Inputs, destroy bool, want engine.Status) engine.Result {
	t.Helper()
	call := e.Apply
	if destroy {
		call = e.Destroy
	}
	rs, err := call(context.Background(), []plan.Step{st}, in)
	if err != nil {
		t.Fatalf("%s %s: %v", st.Action, st.Address, err)
	}
	if len(rs) != 1 || rs[0].Address != st.Address || rs[0].Status != want {
		t.Fatalf("%s %s: results %+v, want one %s result", st.Action, st.Address, rs, want)
	}
	r := rs[0]
	if r.Err != nil || r.Started.IsZero() || r.Finished.Before(r.Started) {
		t.Errorf("%s %s: result err %v, started %v, finished %v", st.Action, st.Address, r.Err, r.Started, r.Finished)
	}
	return r
}

// prior is the state entry deploy would save for r applied from st.
func prior(st plan.Step, r engine.Result) *statestore.Resource {
	return &statestore.Resource{Kind: st.Kind, Status: statestore.ResourceReady, DesiredConfig: st.Config,
		ActualState: r.ActualState, Outputs: r.Outputs, Pulumi: r.Pulumi}
}

func version(outputs map[string]any) any {
	switch v := outputs["version"].(type) {
	case float64:
		return int(v)
	case string:
		return v
	default:
		return v
	}
}

func lifecycle(t *testing.T, f Fixture) {
	e, in := f.New(t), inputs(t, f)
	const addr = "svc/comp"

	create := f.Step(t, addr, 1)
	create.Action = plan.Create
	r := one(t, e, create, in, false, engine.StatusReady)
	v1 := version(r.Outputs)
	if v1 == nil {
		t.Fatalf("create: outputs %v have no version", r.Outputs)
	}
	if !f.Live(t, in, addr) {
		t.Fatal("create: the component does not exist afterwards")
	}
	p := prior(create, r)

	noop := f.Step(t, addr, 1)
	noop.Action, noop.Prior = plan.NoOp, p
	if rs, err := e.Apply(context.Background(), []plan.Step{noop}, in); err != nil || len(rs) > 1 || (len(rs) == 1 && rs[0].Status != engine.StatusReady) {
		t.Fatalf("no-op: results %+v, err %v; want nothing done", rs, err)
	}

	update := f.Step(t, addr, 2)
	update.Action, update.Prior = plan.Update, p
	update.Diffs = []plan.FieldDiff{{Path: "version", Old: 1, New: 2, Op: plan.OpChange}}
	r = one(t, e, update, in, false, engine.StatusReady)
	if v2 := version(r.Outputs); v2 == v1 {
		t.Errorf("update: outputs version still %v", v2)
	}
	p = prior(update, r)

	replace := f.Step(t, addr, 3)
	replace.Action, replace.Prior = plan.Replace, p
	replace.Diffs = []plan.FieldDiff{{Path: "version", Old: 2, New: 3, Op: plan.OpChange, ForcesReplacement: true}}
	r = one(t, e, replace, in, false, engine.StatusReady)
	if !f.Live(t, in, addr) {
		t.Fatal("replace: the component does not exist afterwards")
	}
	p = prior(replace, r)

	del := plan.Step{Address: addr, Service: "svc", Component: "comp", Kind: create.Kind, Action: plan.Delete, Prior: p, Settings: replace.Settings}
	one(t, e, del, in, false, engine.StatusDeleted)
	if f.Live(t, in, addr) {
		t.Error("delete: the component still exists")
	}

	// Destroy deletes what Apply created.
	again := f.Step(t, addr, 1)
	again.Action = plan.Create
	r = one(t, e, again, in, false, engine.StatusReady)
	gone := f.Step(t, addr, 1)
	gone.Action, gone.Prior = plan.Delete, prior(again, r)
	one(t, e, gone, in, true, engine.StatusDeleted)
	if f.Live(t, in, addr) {
		t.Error("destroy: the component still exists")
	}
}

func refresh(t *testing.T, f Fixture) {
	e, in := f.New(t), inputs(t, f)
	st := f.Step(t, "svc/comp", 1)
	st.Action = plan.Create
	r := one(t, e, st, in, false, engine.StatusReady)
	st.Action, st.Prior = plan.NoOp, prior(st, r)
	drift, err := e.Refresh(context.Background(), []plan.Step{st}, in)
	if errors.Is(err, engine.ErrNotSupported) {
		return
	}
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if len(drift) != 0 {
		t.Errorf("refresh right after apply: drift %+v, want none", drift)
	}
}

func cancel(t *testing.T, f Fixture) {
	e, in := f.New(t), inputs(t, f)
	st, started := f.Slow(t, "svc/slow")
	st.Action = plan.Create
	w := &watch{text: []byte(started), seen: make(chan struct{})}
	in.Progress = w
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	var rs []engine.Result
	var err error
	go func() {
		defer close(done)
		rs, err = e.Apply(ctx, []plan.Step{st}, in)
	}()
	// Cancel once the step runs: the call must return (bounded by the
	// engine's own grace period).
	select {
	case <-w.seen:
	case <-done:
		t.Fatalf("the slow step finished before it was cancelled: %+v, %v", rs, err)
	}
	stop()
	<-done
	if err == nil {
		t.Fatal("cancelled apply returned no error")
	}
	for _, r := range rs {
		if r.Status.Succeeded() {
			t.Errorf("cancelled apply: %s is %s", r.Address, r.Status)
		}
	}
	if _, ok := in.Outputs[st.Address]; ok && len(rs) > 0 && rs[0].Status != engine.StatusReady {
		t.Errorf("cancelled apply left outputs for %s: %v", st.Address, maps.Clone(in.Outputs[st.Address]))
	}
}

// watch is a progress writer that closes seen once text was written.
type watch struct {
	mu   sync.Mutex
	buf  []byte
	text []byte
	seen chan struct{}
	once sync.Once
}

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if bytes.Contains(w.buf, w.text) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// Package enginetest is the conformance suite every engine runs, as
// locktest and storetest are for the backends (docs/design.md#engines): an
// engine's test hands Run a Fixture, and the suite takes one component
// through preflight, create, no-op, update, replace, delete, destroy,
// refresh and preview, checking what deploy relies on: one Result per step
// started, statuses, outputs, errors.
//
// Which further cases apply follows from what the fixture's kind declares
// in the engine's catalog (engine.Kind): a kind that manages something
// (no Read) must also show that create and delete really acted (Fixture.Live)
// and that a cancelled apply, and one whose engine is killed (the second
// Ctrl-C), returns promptly having succeeded at nothing (Fixture.Slow); a data source (Kind.Read set: StackReference) holds
// nothing and runs nothing, so instead the suite checks that an apply
// records exactly what the plan read.
package enginetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
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
	// Progress are set by the suite. Each call is a new run's world: a
	// component created in one case is not seen by another.
	Inputs func(t *testing.T) engine.Inputs
	// Step returns a step of the engine's kind at address with version v
	// of its desired state (v > 0): applying it yields outputs whose
	// version (Version) is v. Going from 2 to 3 is a change that forces
	// replacement (the suite's replace step). Action and Prior are set by
	// the suite. For a data source, Step also moves what Read finds to
	// version v.
	Step func(t *testing.T, address string, v int) plan.Step
	// Version returns the version held in a component's outputs; nil reads
	// outputs["version"]. A number or a string.
	Version func(outputs map[string]any) any
	// Slow returns a step whose apply blocks until its context is
	// cancelled or the engine killed (the cancel and kill cases), and a
	// text its progress shows once it runs. Required unless the kind is a
	// data source.
	Slow func(t *testing.T, address string) (plan.Step, string)
	// Live reports whether the component at address exists now (outside
	// the engine), to check create and delete really acted. Required
	// unless the kind is a data source.
	Live func(t *testing.T, in engine.Inputs, address string) bool
}

// Run runs every case that applies to the fixture's kind against f.
func Run(t *testing.T, f Fixture) {
	kind := kindOf(t, f)
	t.Run("Catalog", func(t *testing.T) { catalog(t, f) })
	t.Run("Lifecycle", func(t *testing.T) { lifecycle(t, f, kind) })
	t.Run("Refresh", func(t *testing.T) { refresh(t, f, kind) })
	if kind.Read != nil {
		t.Run("ApplyRecordsWhatThePlanRead", func(t *testing.T) { recordsRead(t, f, kind) })
		return
	}
	t.Run("Cancel", func(t *testing.T) { cancel(t, f, kind) })
	t.Run("Kill", func(t *testing.T) { kill(t, f, kind) })
}

// kindOf returns the catalog entry of the fixture's kind, and checks the
// fixture gives what that kind's cases need.
func kindOf(t *testing.T, f Fixture) engine.Kind {
	t.Helper()
	name := f.Step(t, "svc/comp", 1).Kind
	for _, k := range f.New(t).Kinds() {
		if k.Name != name {
			continue
		}
		if k.Read == nil && (f.Live == nil || f.Slow == nil) {
			t.Fatalf("kind %s manages what it applies (no Read): the fixture must give Live and Slow", name)
		}
		return k
	}
	t.Fatalf("the fixture's kind %q is not in the engine's catalog", name)
	return engine.Kind{}
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

// planned does for a non-delete step of a data source what planning does:
// it reads the component's outputs (Kind.Read) and hands them to the apply
// in in.Outputs. It returns what was read (nil for other kinds).
func planned(t *testing.T, kind engine.Kind, st plan.Step, in engine.Inputs) map[string]any {
	t.Helper()
	if kind.Read == nil || st.Action == plan.Delete {
		return nil
	}
	outs, err := kind.Read(context.Background(), st, in)
	if err != nil {
		t.Fatalf("read %s: %v", st.Address, err)
	}
	in.Outputs[st.Address] = maps.Clone(outs)
	return outs
}

// one applies a single step (after planning it) and checks it gave one
// Result of status want; a data source's Result holds what was read.
func one(t *testing.T, e engine.Engine, kind engine.Kind, st plan.Step, in engine.Inputs, destroy bool, want engine.Status) engine.Result {
	t.Helper()
	read := planned(t, kind, st, in)
	call := apply
	if destroy {
		call = destroyAll
	}
	rs, err := call(context.Background(), e, []plan.Step{st}, in)
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
	if read != nil && !reflect.DeepEqual(r.Outputs, read) {
		t.Errorf("%s %s: outputs %v, want what the plan read %v", st.Action, st.Address, r.Outputs, read)
	}
	return r
}

// prior is the state entry deploy would save for r applied from st.
func prior(st plan.Step, r engine.Result) *statestore.Resource {
	return &statestore.Resource{Kind: st.Kind, Status: statestore.ResourceReady, DesiredConfig: st.Config,
		ActualState: r.ActualState, Outputs: r.Outputs, EngineData: r.EngineData}
}

func (f Fixture) version(outputs map[string]any) any {
	var v any
	if f.Version != nil {
		v = f.Version(outputs)
	} else {
		v = outputs["version"]
	}
	if n, ok := v.(float64); ok {
		return int(n)
	}
	return v
}

// isVersion reports whether v (from Fixture.version) is version n.
func isVersion(v any, n int) bool { return v == n || v == strconv.Itoa(n) }

// live checks, for a kind that manages something, that the component at
// address exists (want) or not after what.
func live(t *testing.T, f Fixture, kind engine.Kind, in engine.Inputs, address, what string, want bool) {
	t.Helper()
	if kind.Read != nil {
		return // a data source holds nothing outside deployer's state
	}
	switch got := f.Live(t, in, address); {
	case want && !got:
		t.Fatalf("%s: the component does not exist afterwards", what)
	case !want && got:
		t.Errorf("%s: the component still exists", what)
	}
}

func lifecycle(t *testing.T, f Fixture, kind engine.Kind) {
	e, in := f.New(t), inputs(t, f)
	const addr = "svc/comp"

	create := f.Step(t, addr, 1)
	create.Action = plan.Create
	// deploy runs the engine's preflight for the components in scope
	// before any lock: the fixture's own step must pass it.
	if err := e.Preflight(context.Background(), engine.PreflightRequest{Components: []plan.Step{create}}); err != nil {
		t.Fatalf("preflight: %v", err)
	}
	r := one(t, e, kind, create, in, false, engine.StatusReady)
	if v := f.version(r.Outputs); !isVersion(v, 1) {
		t.Fatalf("create: outputs %v hold version %v, want 1", r.Outputs, v)
	}
	live(t, f, kind, in, addr, "create", true)
	p := prior(create, r)

	noop := f.Step(t, addr, 1)
	noop.Action, noop.Prior = plan.NoOp, p
	planned(t, kind, noop, in)
	if rs, err := apply(context.Background(), e, []plan.Step{noop}, in); err != nil || len(rs) > 1 || (len(rs) == 1 && rs[0].Status != engine.StatusReady) {
		t.Fatalf("no-op: results %+v, err %v; want nothing done", rs, err)
	}
	live(t, f, kind, in, addr, "no-op", true)

	update := f.Step(t, addr, 2)
	update.Action, update.Prior = plan.Update, p
	update.Diffs = []plan.FieldDiff{{Path: "version", Old: 1, New: 2, Op: plan.OpChange}}
	r = one(t, e, kind, update, in, false, engine.StatusReady)
	if v := f.version(r.Outputs); !isVersion(v, 2) {
		t.Errorf("update: outputs %v hold version %v, want 2", r.Outputs, v)
	}
	p = prior(update, r)

	replace := f.Step(t, addr, 3)
	replace.Action, replace.Prior, replace.PriorSettings = plan.Replace, p, update.Settings // as a plan gives it: what the prior was applied with
	replace.Diffs = []plan.FieldDiff{{Path: "version", Old: 2, New: 3, Op: plan.OpChange, ForcesReplacement: true}}
	r = one(t, e, kind, replace, in, false, engine.StatusReady)
	if v := f.version(r.Outputs); !isVersion(v, 3) {
		t.Errorf("replace: outputs %v hold version %v, want 3", r.Outputs, v)
	}
	live(t, f, kind, in, addr, "replace", true)
	p = prior(replace, r)

	del := plan.Step{Address: addr, Service: "svc", Component: "comp", Kind: create.Kind, Action: plan.Delete, Prior: p, Settings: replace.Settings}
	one(t, e, kind, del, in, false, engine.StatusDeleted)
	live(t, f, kind, in, addr, "delete", false)

	// Destroy deletes what Apply created.
	again := f.Step(t, addr, 1)
	again.Action = plan.Create
	r = one(t, e, kind, again, in, false, engine.StatusReady)
	live(t, f, kind, in, addr, "create again", true)
	gone := f.Step(t, addr, 1)
	gone.Action, gone.Prior = plan.Delete, prior(again, r)
	one(t, e, kind, gone, in, true, engine.StatusDeleted)
	live(t, f, kind, in, addr, "destroy", false)
}

// refresh: right after an apply, a refresh finds no drift; and the engine
// refreshes the component exactly when the catalog says it covers it
// (Kind.Refresh; When narrows it to components the fixture may lack).
func refresh(t *testing.T, f Fixture, kind engine.Kind) {
	e, in := f.New(t), inputs(t, f)
	st := f.Step(t, "svc/comp", 1)
	st.Action = plan.Create
	r := one(t, e, kind, st, in, false, engine.StatusReady)
	st.Action, st.Prior = plan.NoOp, prior(st, r)
	resp, err := e.Refresh(context.Background(), engine.RefreshRequest{Steps: []plan.Step{st}, Inputs: in})
	drift := resp.Drift
	if errors.Is(err, engine.ErrNotSupported) {
		if kind.Refresh.Covered && kind.Refresh.When == "" {
			t.Errorf("refresh: %v, but the catalog says it covers every %s component (Kind.Refresh)", err, kind.Name)
		}
		return
	}
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if !kind.Refresh.Covered {
		t.Errorf("refresh covered a %s component the catalog says it does not cover (Kind.Refresh)", kind.Name)
	}
	if len(drift) != 0 {
		t.Errorf("refresh right after apply: drift %+v, want none", drift)
	}
	preview(t, e, kind, st, in)
}

// preview asks for the engine's preview of updating the applied component
// st to version 2: a kind whose every component the catalog says Preview
// covers (Kind.Preview) gets a text; one it does not cover gets
// ErrNotSupported.
func preview(t *testing.T, e engine.Engine, kind engine.Kind, st plan.Step, in engine.Inputs) {
	t.Helper()
	if kind.Preview.Covered && kind.Preview.When != "" {
		return // covered for some components only: nothing to require here
	}
	st.Action = plan.Update
	resp, err := e.Preview(context.Background(), engine.PreviewRequest{Steps: []plan.Step{st}, Inputs: in})
	text := resp.Text
	switch {
	case kind.Preview.Covered && (err != nil || strings.TrimSpace(text) == ""):
		t.Errorf("preview: %q, %v; the catalog says it covers every %s component (Kind.Preview)", text, err, kind.Name)
	case !kind.Preview.Covered && !errors.Is(err, engine.ErrNotSupported):
		t.Errorf("preview: %q, %v; want ErrNotSupported: the catalog says it covers no %s component (Kind.Preview)", text, err, kind.Name)
	}
}

// recordsRead: a data source's apply records the outputs its plan read,
// even when what Read finds has moved since (what applies is what was
// shown), and reading again finds the new values.
func recordsRead(t *testing.T, f Fixture, kind engine.Kind) {
	e, in := f.New(t), inputs(t, f)
	st := f.Step(t, "svc/comp", 1)
	st.Action = plan.Create
	read := planned(t, kind, st, in)
	f.Step(t, "svc/comp", 2) // what Read finds moves on after the plan
	rs, err := apply(context.Background(), e, []plan.Step{st}, in)
	if err != nil || len(rs) != 1 || rs[0].Status != engine.StatusReady {
		t.Fatalf("apply: results %+v, err %v; want one ready result", rs, err)
	}
	if !reflect.DeepEqual(rs[0].Outputs, read) {
		t.Errorf("apply recorded %v, want what the plan read %v", rs[0].Outputs, read)
	}
	now, err := kind.Read(context.Background(), st, in)
	if err != nil {
		t.Fatalf("read again: %v", err)
	}
	if v := f.version(now); !isVersion(v, 2) {
		t.Errorf("a second read holds version %v, want 2 (what is there now)", v)
	}
}

// cancel starts the slow step and, once it runs, cancels the call's context
// (Ctrl-C): the call must return (bounded by the engine's own grace period)
// having succeeded at nothing, and leave nothing that stops the next run in
// the same place (for Pulumi: no pending operation, no held stack lock).
func cancel(t *testing.T, f Fixture, kind engine.Kind) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	r := startSlow(t, f, ctx, "cancelled")
	stop()
	rs, err := r.wait()
	if err == nil {
		t.Fatal("cancelled apply returned no error")
	}
	for _, res := range rs {
		if res.Status.Succeeded() {
			t.Errorf("cancelled apply: %s is %s", res.Address, res.Status)
		}
	}
	if _, ok := r.in.Outputs[r.step.Address]; ok && len(rs) > 0 && rs[0].Status != engine.StatusReady {
		t.Errorf("cancelled apply left outputs for %s: %v", r.step.Address, maps.Clone(r.in.Outputs[r.step.Address]))
	}
	applyAfter(t, f, kind, r.in, "an apply after the cancelled one")
}

// kill starts the slow step and, once it runs, kills the engine (the second
// Ctrl-C) without cancelling the call's context: the call must return
// having succeeded at nothing, the step cancelled or pending
// (engine.Status), and leave nothing that stops the next run in the same
// place. An engine whose Kill did nothing never returns from the slow step:
// the test then fails at go test's timeout.
func kill(t *testing.T, f Fixture, kind engine.Kind) {
	r := startSlow(t, f, context.Background(), "killed")
	r.engine.Kill()
	rs, err := r.wait()
	st, in := r.step, r.in
	if err == nil {
		t.Fatal("apply of a killed engine returned no error")
	}
	if len(rs) != 1 || rs[0].Address != st.Address {
		t.Fatalf("killed apply: results %+v, want one for %s (it was started)", rs, st.Address)
	}
	if s := rs[0].Status; s != engine.StatusCancelled && s != engine.StatusPending {
		t.Errorf("killed apply: %s is %s, want %s or %s", st.Address, s, engine.StatusCancelled, engine.StatusPending)
	}
	if rs[0].Err == nil {
		t.Errorf("killed apply: the result of %s holds no error", st.Address)
	}
	if _, ok := in.Outputs[st.Address]; ok {
		t.Errorf("killed apply left outputs for %s: %v", st.Address, maps.Clone(in.Outputs[st.Address]))
	}
	// A killed engine starts nothing more.
	after := f.Step(t, "svc/after", 1)
	after.Action = plan.Create
	if rs, err := apply(context.Background(), r.engine, []plan.Step{after}, in); err == nil || slices.ContainsFunc(rs, func(r engine.Result) bool { return r.Status.Succeeded() }) {
		t.Errorf("apply after Kill: results %+v, err %v; want an error and nothing done", rs, err)
	}
	applyAfter(t, f, kind, in, "an apply after the killed one")
}

// slowRun is the fixture's slow step being applied by a fresh engine in the
// background (startSlow).
type slowRun struct {
	engine engine.Engine
	in     engine.Inputs
	step   plan.Step
	done   chan struct{}
	rs     []engine.Result
	err    error
}

// startSlow applies the fixture's slow step with ctx in the background and
// returns once the step runs (its start text reached Progress); the test
// fails if the step finishes first. how names the interruption to come
// ("cancelled", "killed") in that failure.
func startSlow(t *testing.T, f Fixture, ctx context.Context, how string) *slowRun {
	t.Helper()
	r := &slowRun{engine: f.New(t), in: inputs(t, f), done: make(chan struct{})}
	st, started := f.Slow(t, "svc/slow")
	st.Action = plan.Create
	r.step = st
	w := &watch{text: []byte(started), seen: make(chan struct{})}
	r.in.Progress = w
	go func() {
		defer close(r.done)
		r.rs, r.err = apply(ctx, r.engine, []plan.Step{st}, r.in)
	}()
	select {
	case <-w.seen:
	case <-r.done:
		t.Fatalf("the slow step finished before it was %s: %+v, %v", how, r.rs, r.err)
	}
	return r
}

// wait returns the slow apply's results once it has returned.
func (r *slowRun) wait() ([]engine.Result, error) {
	<-r.done
	return r.rs, r.err
}

// applyAfter creates svc/comp with a fresh engine after an interrupted
// apply: it must succeed and be live (nothing the interruption left stops
// the next run in the same place).
func applyAfter(t *testing.T, f Fixture, kind engine.Kind, in engine.Inputs, what string) {
	t.Helper()
	next := f.Step(t, "svc/comp", 1)
	next.Action = plan.Create
	one(t, f.New(t), kind, next, in, false, engine.StatusReady)
	live(t, f, kind, in, next.Address, what, true)
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

// apply and destroyAll make one Apply or Destroy call of e with steps and in.
func apply(ctx context.Context, e engine.Engine, steps []plan.Step, in engine.Inputs) ([]engine.Result, error) {
	resp, err := e.Apply(ctx, engine.ApplyRequest{Steps: steps, Inputs: in})
	return resp.Results, err
}

func destroyAll(ctx context.Context, e engine.Engine, steps []plan.Step, in engine.Inputs) ([]engine.Result, error) {
	resp, err := e.Destroy(ctx, engine.DestroyRequest{Steps: steps, Inputs: in})
	return resp.Results, err
}

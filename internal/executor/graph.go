package executor

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/deployer-dev/deployer/internal/dag"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// node is one step of the apply graph.
type node struct {
	step plan.Step
	eng  engine.Engine
	half half
}

// half says which part of a replace across engines a node is (replaceHalves).
type half int

const (
	whole     half = iota // a step as planned
	oldDelete             // the old kind's engine deletes the existing instance
	newCreate             // then the new kind's engine creates the new one
)

// completion is what one engine call reports back to the scheduler.
type completion struct {
	ids     []int
	results []engine.Result
	err     error
}

// scheduler applies a plan's changes as a graph (a dag.Executor): every
// step starts once the steps it depends on have finished, at most limit
// engine calls at a time. A failure stops new work; running calls finish
// (or see ctx cancelled).
type scheduler struct {
	x       *Executor
	st      *statestore.State
	base    engine.Inputs
	destroy bool
	limit   int
	planned map[string]plan.Step // every step of the plan, by address

	nodes []*node
	graph *dag.Graph
	busy  map[engine.Engine]bool // batch engines with a call running

	mu        sync.Mutex // guards the fields below, written as calls complete
	outputs   map[string]map[string]any
	applied   map[string]plan.Step // steps applied (ready) in this run
	deleted   map[string]bool
	inputs    map[string]*statestore.ResolvedInputs
	results   []engine.Result
	unchanged []string
	// halfDone holds, by address, the result of the delete half of a
	// replace across engines until its create half reports; gone lists the
	// addresses whose existing instance that delete removed.
	halfDone map[string]engine.Result
	gone     map[string]bool
}

// Request is one apply (or destroy) of a plan's changes.
type Request struct {
	Plan *plan.Plan
	// State is the state Plan was made against, as loaded: what the
	// components kept (Keep) and the re-evaluated ones' baselines come from.
	State   *statestore.State
	Inputs  engine.Inputs // the engines' inputs; Outputs are the outputs known before the run
	Destroy bool
	// Limit bounds the engine calls running at once (--parallelism); below
	// 1 is 1.
	Limit int
}

// Run is what Apply did: the engine results, the resolved inputs of each
// component applied, and the re-evaluated components left alone.
type Run struct {
	Results   []engine.Result
	Inputs    map[string]*statestore.ResolvedInputs
	Unchanged []string
	// Gone lists the components whose existing instance the engine of its
	// old kind deleted in this run, on a replace across engines: whatever
	// became of the create, the state no longer holds the old one.
	Gone map[string]bool
}

// Apply applies the plan's changes (docs/plan.md "Parallel apply"):
// steps in dependency order, independent ones concurrently up to
// req.Limit engine calls; re-evaluated steps are re-diffed once their
// dependencies are applied and run only when their resolved inputs
// changed. It returns what ran, and the first error: an engine's, or one
// naming a step that did not finish well; what finished is in the Run.
func (x *Executor) Apply(ctx context.Context, req Request) (Run, error) {
	p, st, in, destroy, limit := req.Plan, req.State, req.Inputs, req.Destroy, req.Limit
	if limit < 1 {
		limit = 1
	}
	g := &scheduler{
		x: x, st: st, base: in, destroy: destroy, limit: limit, planned: make(map[string]plan.Step, len(p.Steps)),
		outputs: in.Outputs, applied: map[string]plan.Step{}, deleted: map[string]bool{}, inputs: map[string]*statestore.ResolvedInputs{},
		halfDone: map[string]engine.Result{}, gone: map[string]bool{}, busy: map[engine.Engine]bool{},
	}
	if g.outputs == nil {
		g.outputs = map[string]map[string]any{}
	}
	g.base.Progress = &lineWriter{w: progressOr(in.Progress)}
	for _, step := range p.Steps {
		g.planned[step.Address] = step
	}
	steps := p.Changes()
	preds := plan.Predecessors(steps)
	last := make([]int, len(steps)) // the node of each step its successors wait for
	var pred [][]int                // the nodes each node waits for
	for i, step := range steps {
		halves, err := x.replaceHalves(step)
		if err != nil {
			return Run{}, err
		}
		for k, h := range halves {
			g.nodes = append(g.nodes, &node{step: h.step, eng: h.eng, half: h.half})
			pred = append(pred, nil)
			if k > 0 {
				pred[len(pred)-1] = []int{len(g.nodes) - 2} // the create waits for the delete
			}
		}
		last[i] = len(g.nodes) - 1
	}
	for i, ps := range preds {
		first := last[i]
		if g.nodes[first].half == newCreate {
			first--
		}
		for _, j := range ps {
			pred[first] = append(pred[first], last[j])
		}
	}
	names := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		names[i] = n.step.Address
	}
	g.graph = dag.New(names)
	for i, ps := range pred {
		for _, j := range ps {
			g.graph.Edge(j, i)
		}
	}
	err := g.run(ctx)
	g.unfinishedReplaces()
	return Run{Results: g.results, Inputs: g.inputs, Unchanged: g.unchanged, Gone: g.gone}, err
}

// run runs the graph: engine calls as next and batch pick them, their
// results merged by complete.
func (g *scheduler) run(ctx context.Context) error {
	ex := &dag.Executor[completion]{
		Limit:  g.limit,
		Policy: dag.StopOnFailure,
		Pick:   g.next,
		Call: func(ctx context.Context, ids []int) completion {
			steps := make([]plan.Step, len(ids))
			for k, i := range ids {
				steps[k] = g.nodes[i].step
			}
			return g.call(ctx, g.nodes[ids[0]].eng, ids, steps)
		},
		Done: g.complete,
	}
	r, err := ex.Run(ctx, g.graph)
	if err != nil {
		return err
	}
	for i, n := range g.nodes {
		if r.State(i) != dag.Done {
			return fmt.Errorf("apply: %s never became ready (report this as a bug)", n.step.Address)
		}
	}
	return nil
}

// next returns the nodes of the next engine call, in apply order; nil when
// nothing can start now. Re-evaluated nodes whose inputs came out
// unchanged are finished on the way, without a call.
func (g *scheduler) next(r *dag.Run) []int {
	for progressed := true; progressed; {
		progressed = false
		for i, n := range g.nodes {
			if r.IsReady(i) && n.step.Reevaluate && n.step.Action == plan.NoOp && !g.reevaluate(n) {
				r.Finish(i)
				progressed = true
			}
		}
	}
	for i, n := range g.nodes {
		if !r.IsReady(i) {
			continue
		}
		if n.eng.Capabilities().ConcurrentSteps {
			return []int{i}
		}
		if !g.busy[n.eng] {
			g.busy[n.eng] = true
			return g.batch(r, i)
		}
	}
	return nil
}

// batch gathers, for the batch engine of ready node first, every node of
// that engine that can go with it: ready ones, and ones whose unfinished
// predecessors are all in the batch (the engine orders them itself). With
// parallelism 1 only the run of consecutive nodes from first is taken, the
// order of a sequential apply.
func (g *scheduler) batch(r *dag.Run, first int) []int {
	eng := g.nodes[first].eng
	in := map[int]bool{}
	ids := []int{}
	add := func(i int) {
		n := g.nodes[i]
		if n.step.Reevaluate && n.step.Action == plan.NoOp {
			n.step.Action = plan.Update // decided after the batch (settleReevaluated)
		}
		in[i] = true
		ids = append(ids, i)
	}
	if g.limit == 1 {
		for i := first; i < len(g.nodes) && g.nodes[i].eng == eng && r.State(i) == dag.Waiting; i++ {
			if i > first && !r.WaitsOnlyFor(i, in) {
				break
			}
			add(i)
		}
		return ids
	}
	for i := first; i < len(g.nodes); i++ {
		if g.nodes[i].eng != eng || r.State(i) != dag.Waiting {
			continue
		}
		if r.IsReady(i) || r.WaitsOnlyFor(i, in) {
			add(i)
		}
	}
	return ids
}

// reevaluate re-diffs a re-evaluated node whose dependencies are applied:
// it returns true and turns the node into an update when its resolved
// inputs differ from the ones it was last applied with.
func (g *scheduler) reevaluate(n *node) bool {
	g.mu.Lock()
	now := plan.ResolveInputs(n.step.InputDeps, g.outputOf)
	g.mu.Unlock()
	base := g.baseline(n.step)
	w := g.base.Progress
	if plan.InputsEqual(now, base) {
		fmt.Fprintf(w, "[%s] inputs from %s unchanged: no update needed\n", n.step.Address, strings.Join(n.step.InputsFrom, ", "))
		g.mu.Lock()
		g.unchanged = append(g.unchanged, n.step.Address)
		g.mu.Unlock()
		return false
	}
	n.step.Action = plan.Update
	n.step.Diffs = plan.InputDiffs(base, now)
	fmt.Fprintf(w, "[%s] inputs from %s changed: updating\n", n.step.Address, strings.Join(n.step.InputsFrom, ", "))
	return true
}

// baseline is what a component last saw: its recorded inputs, or for states
// written before they were recorded, its dependencies' outputs in the state
// as loaded (docs/decisions.md).
func (g *scheduler) baseline(step plan.Step) *statestore.ResolvedInputs {
	if step.Prior != nil && step.Prior.Inputs != nil {
		return step.Prior.Inputs
	}
	return plan.ResolveInputs(step.InputDeps, func(addr string) map[string]any {
		if r := g.st.Resources[addr]; r != nil {
			return r.Outputs
		}
		return nil
	})
}

// outputOf returns the current outputs of addr; g.mu is held.
func (g *scheduler) outputOf(addr string) map[string]any { return g.outputs[addr] }

// call runs one engine call for nodes ids with a private copy of the outputs.
func (g *scheduler) call(ctx context.Context, eng engine.Engine, ids []int, steps []plan.Step) completion {
	if w := g.x.Steps; w != nil {
		for _, st := range steps {
			w.StepStarted(st.Address, string(st.Action))
		}
		defer func() {
			for _, st := range steps {
				w.StepEnded(st.Address)
			}
		}()
	}
	in := g.base
	g.mu.Lock()
	in.Outputs = maps.Clone(g.outputs)
	if !eng.Capabilities().ConcurrentSteps {
		in.Keep = g.keep(eng, steps)
	}
	g.mu.Unlock()
	if g.destroy {
		resp, err := eng.Destroy(ctx, engine.DestroyRequest{Steps: steps, Inputs: in})
		return completion{ids: ids, results: resp.Results, err: err}
	}
	resp, err := eng.Apply(ctx, engine.ApplyRequest{Steps: steps, Inputs: in})
	return completion{ids: ids, results: resp.Results, err: err}
}

// complete merges a call's results: outputs, resolved inputs, and the
// successors of every node that finished well. It returns the call's error,
// or one naming a step that did not finish well when the engine gave none.
func (g *scheduler) complete(run *dag.Run, ids []int, c completion) error {
	delete(g.busy, g.nodes[ids[0]].eng)
	ok := map[string]bool{}
	g.mu.Lock()
	for _, r := range c.results {
		switch r.Status {
		case engine.StatusReady:
			g.x.learn(r.Address, r.Outputs) // an engine that did not call Learn itself
			g.outputs[r.Address] = maps.Clone(r.Outputs)
			delete(g.deleted, r.Address) // created again after the delete half of a replace
			ok[r.Address] = true
		case engine.StatusDeleted:
			delete(g.outputs, r.Address)
			g.deleted[r.Address] = true
			ok[r.Address] = true
		}
	}
	var kept []engine.Result
	for _, r := range c.results {
		n := g.nodeOf(c.ids, r.Address)
		if n != nil && n.half != whole {
			var held bool
			if r, held = g.joinReplace(n, r); held {
				continue
			}
		}
		if r.Status == engine.StatusReady && n != nil {
			in := plan.ResolveInputs(n.step.InputDeps, g.outputOf)
			if g.settleReevaluated(n, in, r) {
				continue
			}
			g.inputs[r.Address] = in
			g.applied[r.Address] = n.step
		}
		kept = append(kept, r)
	}
	g.results = append(g.results, kept...)
	g.mu.Unlock()
	err := c.err
	for _, i := range c.ids {
		if ok[g.nodes[i].step.Address] {
			run.Finish(i)
			continue
		}
		// failed, cancelled or not reached: successors never start
		if err == nil {
			err = fmt.Errorf("component %s: the %s engine did not apply it", g.nodes[i].step.Address, g.nodes[i].eng.Name())
		}
	}
	return err
}

// settleReevaluated decides, after a batch, a re-evaluated node the batch
// engine applied together with its dependencies: when its resolved inputs
// and outputs came out as they were, it is reported unchanged and its
// result dropped (true). g.mu is held.
func (g *scheduler) settleReevaluated(n *node, in *statestore.ResolvedInputs, r engine.Result) bool {
	orig := g.planned[n.step.Address]
	if !orig.Reevaluate || orig.Action != plan.NoOp || len(n.step.Diffs) > 0 || orig.Prior == nil {
		return false
	}
	if !plan.InputsEqual(in, g.baseline(orig)) || !plan.Equal(map[string]any(r.Outputs), map[string]any(orig.Prior.Outputs)) {
		return false
	}
	g.unchanged = append(g.unchanged, n.step.Address)
	fmt.Fprintf(g.base.Progress, "[%s] inputs from %s unchanged: no update needed\n", n.step.Address, strings.Join(orig.InputsFrom, ", "))
	return true
}

func (g *scheduler) nodeOf(ids []int, addr string) *node {
	for _, i := range ids {
		if g.nodes[i].step.Address == addr {
			return g.nodes[i]
		}
	}
	return nil
}

// keep lists the components of eng's kinds that a batch leaves as they are
// (docs/pulumi.md): components applied earlier in this run with their new
// config, no-op steps, components out of scope, and components whose own
// change comes later. g.mu is held.
func (g *scheduler) keep(eng engine.Engine, run []plan.Step) []plan.Step {
	inRun := map[string]bool{}
	for _, s := range run {
		inRun[s.Address] = true
	}
	addrs := slices.Collect(maps.Keys(g.st.Resources))
	for addr := range g.applied {
		if g.st.Resources[addr] == nil {
			addrs = append(addrs, addr)
		}
	}
	slices.Sort(addrs)
	var keep []plan.Step
	for _, addr := range addrs {
		if inRun[addr] || g.deleted[addr] {
			continue
		}
		if s, ok := g.applied[addr]; ok {
			if eng.Handles(s.Kind) {
				s.Action, s.Diffs, s.Reevaluate = plan.NoOp, nil, false
				keep = append(keep, s)
			}
			continue
		}
		r := g.st.Resources[addr]
		if !eng.Handles(r.Kind) {
			continue
		}
		keep = append(keep, declared(g.planned, addr, r))
	}
	return keep
}

// lineWriter serialises writes of concurrent engine calls to one progress
// writer: each Write (one whole prefixed line from the Command engine) goes
// out in one piece, so lines never interleave mid-line.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func progressOr(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

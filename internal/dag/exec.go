package dag

import (
	"context"
	"errors"
)

// Policy is what an Executor does when a node fails.
type Policy int

const (
	// StopOnFailure starts nothing more after a failure; calls running go
	// on to their end.
	StopOnFailure Policy = iota
	// SkipDependents skips every node that waits, directly or not, for a
	// node that failed or was skipped; the other nodes go on.
	SkipDependents
)

// State is where a node of a run is.
type State int

// The states of a node, in the order it goes through them.
const (
	Waiting State = iota // for a node it waits for, or for a free call
	Running              // in a call
	Done                 // finished well: the nodes waiting for it may go
	Failed               // its call ended without finishing it
	Skipped              // never runs: Exclude, or a node it waits for failed
)

// Executor runs a graph: a node starts once every node it waits for is
// done, in calls of one node (or of a batch, through Pick), at most Limit
// calls at a time. When ctx is cancelled no call starts any more; running
// calls see ctx cancelled and go on to their end, and nothing is released
// or skipped after that: the nodes not started stay Waiting.
//
// Pick, Done and Skip run on the scheduling goroutine, one at a time;
// Call runs on a goroutine of its own.
type Executor[R any] struct {
	// Limit bounds the calls running at once (less than 1: 1).
	Limit int
	// Policy is what a failure does to the rest of the run.
	Policy Policy
	// Exclude, when set, leaves nodes out of the run: they are Skipped
	// from the start and no Skip is reported for them. Nothing should
	// wait for them.
	Exclude func(i int) bool
	// Pick returns the nodes of the next call, or nil when none can start
	// now (nil Pick: the node that became ready first, alone). It may
	// take nodes still Waiting whose waits are in the same call
	// (Run.WaitsOnlyFor), for an engine that orders a batch itself, and
	// may finish nodes without a call (Run.Finish).
	Pick func(r *Run) []int
	// Call runs the nodes ids and returns what Done needs.
	Call func(ctx context.Context, ids []int) R
	// Done takes a call's result: it calls r.Finish for each node of ids
	// that finished well; the others have failed. Its error, if any, is
	// one of Run's errors and, under StopOnFailure, stops the run.
	Done func(r *Run, ids []int, res R) error
	// Skip, when set, is told of each node skipped under SkipDependents
	// and of the failed or skipped node it waited for.
	Skip func(node, cause int)
}

// Run is the state of one execution, for the hooks and for the caller
// once Executor.Run returned.
type Run struct {
	g         *Graph
	state     []State
	waits     []int // nodes each one still waits for
	ready     []int // Waiting nodes whose waits are over, in the order they got there
	cancelled bool
	skip      func(node, cause int)
}

// State returns node i's state.
func (r *Run) State(i int) State { return r.state[i] }

// Ready returns the Waiting nodes that wait for nothing any more, in the
// order they got there (at the start, by index).
func (r *Run) Ready() []int { return r.ready }

// IsReady reports whether node i is Waiting for nothing but a free call.
func (r *Run) IsReady(i int) bool { return r.state[i] == Waiting && r.waits[i] == 0 }

// WaitsOnlyFor reports whether every node i waits for that is not done
// yet is in set.
func (r *Run) WaitsOnlyFor(i int, set map[int]bool) bool {
	for _, j := range r.g.pred[i] {
		if r.state[j] != Done && !set[j] {
			return false
		}
	}
	return true
}

// Finish marks node i done and, unless the run was cancelled, releases the
// nodes waiting for it.
func (r *Run) Finish(i int) {
	r.unready(i)
	r.state[i] = Done
	if r.cancelled {
		return
	}
	for _, j := range r.g.succ[i] {
		if r.waits[j]--; r.waits[j] == 0 && r.state[j] == Waiting {
			r.ready = append(r.ready, j)
		}
	}
}

// fail marks node i failed and, under SkipDependents, skips the nodes
// waiting for it, depth first.
func (r *Run) fail(i int, policy Policy) {
	r.state[i] = Failed
	if policy == SkipDependents && !r.cancelled {
		r.skipAfter(i)
	}
}

func (r *Run) skipAfter(i int) {
	for _, j := range r.g.succ[i] {
		if r.state[j] != Waiting {
			continue // already skipped through another node
		}
		r.unready(j)
		r.state[j] = Skipped
		if r.skip != nil {
			r.skip(j, i)
		}
		r.skipAfter(j)
	}
}

func (r *Run) unready(i int) {
	for k, j := range r.ready {
		if j == i {
			r.ready = append(r.ready[:k:k], r.ready[k+1:]...)
			return
		}
	}
}

// completion is one call's end.
type completion[R any] struct {
	ids []int
	res R
}

// Run executes g until no call runs and none can start. It returns the
// run's state and its errors: the cause of ctx's cancellation and the
// errors Done returned, one as itself, more joined. Nodes neither done,
// failed nor skipped at the end never became ready: a cycle, a cancelled
// run, a failure under StopOnFailure, or a node waiting for an excluded
// one.
func (e *Executor[R]) Run(ctx context.Context, g *Graph) (*Run, error) {
	r := &Run{g: g, state: make([]State, g.Len()), waits: make([]int, g.Len()), skip: e.Skip}
	for i := range g.Len() {
		r.waits[i] = len(g.pred[i])
		switch {
		case e.Exclude != nil && e.Exclude(i):
			r.state[i] = Skipped
		case r.waits[i] == 0:
			r.ready = append(r.ready, i)
		}
	}
	limit := max(e.Limit, 1)
	done := make(chan completion[R])
	calls := 0
	stopped := false
	var errs []error
	for {
		for !stopped && calls < limit {
			if ctx.Err() != nil {
				stopped = true
				errs = append(errs, context.Cause(ctx))
				break
			}
			ids := e.pick(r)
			if len(ids) == 0 {
				break
			}
			for _, i := range ids {
				r.unready(i)
				r.state[i] = Running
			}
			calls++
			go func() { done <- completion[R]{ids: ids, res: e.Call(ctx, ids)} }()
		}
		if calls == 0 {
			break
		}
		c := <-done
		calls--
		r.cancelled = ctx.Err() != nil
		err := e.Done(r, c.ids, c.res)
		failed := false
		for _, i := range c.ids {
			if r.state[i] == Running {
				r.fail(i, e.Policy)
				failed = true
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
		if (failed || err != nil) && e.Policy == StopOnFailure {
			stopped = true
		}
	}
	switch len(errs) {
	case 0:
		return r, nil
	case 1:
		return r, errs[0]
	}
	return r, errors.Join(errs...)
}

func (e *Executor[R]) pick(r *Run) []int {
	if e.Pick != nil {
		return e.Pick(r)
	}
	if len(r.ready) == 0 {
		return nil
	}
	return r.ready[:1:1]
}

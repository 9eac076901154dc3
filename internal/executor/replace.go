package executor

import (
	"fmt"
	"maps"
	"slices"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// A replace whose old kind is applied by another engine than its new kind
// (a kind change across engines, docs/plan.md#actions) is two engine
// calls: the engine of the old kind deletes the existing instance, with the
// settings its state recorded (plan.Step.PriorSettings) and its EngineData,
// then the engine of the new kind creates the new one, in the step's place
// in the order. A failed delete stops the create; the state then keeps the
// old instance, marked failed, so the next plan replaces it again.

// halfStep is one engine call's part of a plan step.
type halfStep struct {
	step plan.Step
	eng  engine.Engine
	half half
}

// priorEngine returns the engine of the existing instance of step when
// step replaces it with a kind another engine applies; nil otherwise (the
// engine of the new kind handles its own replace).
func (x *Executor) priorEngine(step plan.Step) (engine.Engine, error) {
	if step.Action != plan.Replace || step.Prior == nil || step.Prior.Kind == step.Kind {
		return nil, nil
	}
	old, err := x.EngineFor(step.Prior.Kind)
	if err != nil {
		return nil, fmt.Errorf("component %s: its state's kind: %w", step.Address, err)
	}
	eng, err := x.EngineFor(step.Kind)
	if err != nil || old == eng {
		return nil, err
	}
	return old, nil
}

// replaceHalves returns the engine calls of step: the step itself with its
// kind's engine, or for a replace across engines the delete of the
// existing instance by the old kind's engine, then the create of the new
// one by the new kind's engine. The create carries no Prior: the new
// engine never sees another engine's record as its own.
func (x *Executor) replaceHalves(step plan.Step) ([]halfStep, error) {
	eng, err := x.EngineFor(step.Kind)
	if err != nil {
		return nil, err
	}
	old, err := x.priorEngine(step)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return []halfStep{{step: step, eng: eng, half: whole}}, nil
	}
	del := plan.Step{Address: step.Address, Service: step.Service, Component: step.Component, Kind: step.Prior.Kind,
		Action: plan.Delete, DependsOn: slices.Clone(step.Prior.Dependencies), Config: step.Prior.DesiredConfig,
		Settings: step.PriorSettings, Runs: step.Runs, Prior: step.Prior}
	create := step
	create.Action, create.Prior, create.PriorSettings, create.Runs, create.DeletedBy = plan.Create, nil, nil, nil, ""
	return []halfStep{{step: del, eng: old, half: oldDelete}, {step: create, eng: eng, half: newCreate}}, nil
}

// MarkDeletedBy sets, on every replace of p across engines, the name of
// the engine that deletes the existing instance (plan.Step.DeletedBy), so
// the plan shown says who deletes it.
func (x *Executor) MarkDeletedBy(p *plan.Plan) error {
	for i := range p.Steps {
		old, err := x.priorEngine(p.Steps[i])
		if err != nil {
			return err
		}
		if old != nil {
			p.Steps[i].DeletedBy = old.Name()
		}
	}
	return nil
}

// joinReplace merges the result r of half n of a replace across engines
// into one result of the plan's step; g.mu is held. A delete that
// succeeded is held back (true) until the create reports: the step's one
// result is then the create's, as a replace, timed from the delete's start.
// A failed delete is the step's result (the create never starts).
func (g *scheduler) joinReplace(n *node, r engine.Result) (engine.Result, bool) {
	if n.half == oldDelete {
		if r.Status == engine.StatusDeleted {
			g.halfDone[r.Address] = r
			g.gone[r.Address] = true
			return r, true
		}
		r.Action = plan.Replace
		return r, false
	}
	if del, ok := g.halfDone[r.Address]; ok {
		r.Started = del.Started
		delete(g.halfDone, r.Address)
	}
	r.Action = plan.Replace
	return r, false
}

// unfinishedReplaces adds a cancelled result for every replace across
// engines whose delete succeeded and whose create never reported (the run
// stopped first): the old instance is gone, the new one was not created.
func (g *scheduler) unfinishedReplaces() {
	for _, addr := range slices.Sorted(maps.Keys(g.halfDone)) {
		del := g.halfDone[addr]
		g.results = append(g.results, engine.Result{Address: addr, Action: plan.Replace, Status: engine.StatusCancelled,
			Err:     fmt.Errorf("component %s: the existing instance was deleted, the new one not created: the run stopped first; the next deploy creates it", addr),
			Started: del.Started, Finished: del.Finished})
	}
	clear(g.halfDone)
}

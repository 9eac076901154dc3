package executor

import (
	"fmt"
	"maps"
	"slices"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Executor is what an apply needs: the engines, who hears the steps,
// and who learns the outputs. The zero value of the optional fields does
// nothing.
type Executor struct {
	Engines []engine.Engine
	// Steps, when set, hears each step start and end (the live progress of
	// a deploy, docs/command-kind.md#progress).
	Steps StepWatcher
	// Learn, when set, gets the outputs of every component applied, for an
	// engine that did not report them through Inputs.Learn itself (the
	// secret values among them are masked from then on, docs/secrets.md).
	Learn func(address string, outputs map[string]any)
}

// StepWatcher hears the steps of an apply run: StepStarted when the
// engine call that runs a step starts (action: create, update, replace or
// delete), StepEnded when that call returns. Calls come from the goroutines
// of the calls.
type StepWatcher interface {
	StepStarted(address, action string)
	StepEnded(address string)
}

func (x *Executor) learn(addr string, outputs map[string]any) {
	if x.Learn != nil {
		x.Learn(addr, outputs)
	}
}

// EngineFor returns the engine that handles kind, or an error naming the
// kind no engine handles.
func (x *Executor) EngineFor(kind string) (engine.Engine, error) {
	for _, e := range x.Engines {
		if e.Handles(kind) {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no engine handles kind %q", kind)
}

// EngineRun is the steps of one engine in a plan: changes, and every
// component of its kinds that has state (for refresh).
type EngineRun struct {
	Engine         engine.Engine
	Changes, Prior []plan.Step
}

// ByEngine groups p's steps by engine, in the order of x.Engines; a
// replace across engines is a delete for the old kind's engine and a
// create for the new kind's (replaceHalves).
func (x *Executor) ByEngine(p *plan.Plan) []EngineRun {
	var runs []EngineRun
	for _, e := range x.Engines {
		r := EngineRun{Engine: e}
		has := false
		for _, st := range p.Steps {
			if st.Action != plan.NoOp || st.MovedFrom != "" {
				halves, err := x.replaceHalves(st)
				if err != nil {
					halves = nil // a kind no engine handles: apply reports it
				}
				for _, h := range halves {
					if e.Handles(h.step.Kind) {
						has = true
						r.Changes = append(r.Changes, h.step)
					}
				}
			}
			if !e.Handles(st.Kind) {
				continue
			}
			has = true
			if st.Prior != nil {
				r.Prior = append(r.Prior, st)
			}
		}
		if has {
			runs = append(runs, r)
		}
	}
	return runs
}

// Keep lists the components of eng's kinds that this run leaves as they
// are: no-op steps, components outside the --service/--component scope, and
// components whose own change comes in a later run. Pulumi's program must
// still declare them, or `up` would delete them (docs/pulumi.md).
func Keep(p *plan.Plan, st *statestore.State, eng engine.Engine, run []plan.Step) []plan.Step {
	inRun := map[string]bool{}
	for _, s := range run {
		inRun[s.Address] = true
	}
	planned := map[string]plan.Step{}
	for _, s := range p.Steps {
		planned[s.Address] = s
	}
	var keep []plan.Step
	for _, addr := range slices.Sorted(maps.Keys(st.Resources)) {
		r := st.Resources[addr]
		if inRun[addr] || !eng.Handles(r.Kind) {
			continue
		}
		keep = append(keep, declared(planned, addr, r))
	}
	return keep
}

// declared is the no-op step that declares the state resource r at addr as it
// is: the plan's own no-op step when it has one (with no re-evaluation mark),
// else one built from r.
func declared(planned map[string]plan.Step, addr string, r *statestore.Resource) plan.Step {
	if s, ok := planned[addr]; ok && s.Action == plan.NoOp {
		s.Reevaluate = false
		return s
	}
	svc, comp := config.SplitAddress(addr)
	return plan.Step{Address: addr, Service: svc, Component: comp, Kind: r.Kind, Action: plan.NoOp,
		DependsOn: r.Dependencies, Config: r.DesiredConfig, Prior: r, Protect: r.Lifecycle.Protect}
}

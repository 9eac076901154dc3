package plan

import (
	"maps"
	"slices"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// stateInputs compares each component's recorded inputs with its
// dependencies' outputs in state.
type stateInputs struct {
	prior map[string]*statestore.Resource
	read  map[string]map[string]any // Options.Read
	seal  sealer
}

func newStateInputs(prior map[string]*statestore.Resource, read map[string]map[string]any) *stateInputs {
	return &stateInputs{prior: prior, read: read, seal: sealer{}}
}

// outputs are addr's outputs now: as read when planning for a data
// component, else as the state has them.
func (si *stateInputs) outputs(addr string) map[string]any {
	if o, ok := si.read[addr]; ok {
		return o
	}
	if r := si.prior[addr]; r != nil {
		return r.Outputs
	}
	return nil
}

// diff adds (inputs) diffs to a step whose recorded inputs differ from its
// dependencies' outputs in state now: a dependency changed after the
// component was last applied (a scoped deploy, or a failure in between). A
// no-op becomes an update. Components without recorded inputs (states
// written before they were recorded) are taken to have seen the state's
// outputs: no diff (docs/decisions.md).
func (si *stateInputs) diff(s *Step) {
	if s.Prior == nil || s.Prior.Inputs == nil || s.Action == Replace {
		return
	}
	rec := s.Prior.Inputs
	changed := false
	for _, d := range s.InputDeps {
		if old, ok := rec.Dependencies[d]; ok && !si.seal.equal(old, si.outputs(d)) {
			changed = true
			break
		}
	}
	if !changed {
		return
	}
	cur := &statestore.ResolvedInputs{Dependencies: make(map[string]map[string]any, len(s.InputDeps))}
	for _, d := range s.InputDeps {
		cur.Dependencies[d] = si.seal.outputs(si.outputs(d))
	}
	s.Diffs = append(s.Diffs, InputDiffs(rec, cur)...)
	if s.Action == NoOp {
		s.Action = Update
	}
}

// propagate marks, in apply order, every no-op step with a dependency that
// is created, updated, replaced or re-evaluated as Reevaluate, and fills
// InputsFrom on every non-delete step with such dependencies.
func propagate(ordered []Step) {
	changing := make(map[string]bool, len(ordered))
	for i := range ordered {
		s := &ordered[i]
		if s.Action == Delete {
			continue
		}
		for _, d := range s.InputDeps {
			if changing[d] {
				s.InputsFrom = append(s.InputsFrom, d)
			}
		}
		if len(s.InputsFrom) > 0 && s.Action == NoOp {
			s.Reevaluate = true
		}
		if (s.Action != NoOp && !s.LifecycleOnly()) || s.Reevaluate {
			changing[s.Address] = true
		}
	}
}

// outOfScope returns the components outside the plan's scope (in: the
// addresses in it) whose inputs come, directly or through other
// components, from a step the plan changes or re-evaluates, by address.
func outOfScope(desired *config.Resolved, ordered []Step, in map[string]bool) []Dependent {
	dependents := map[string][]string{}
	for addr, c := range desired.Components {
		for _, d := range InputDeps(c.DependsOn) {
			dependents[d] = append(dependents[d], addr)
		}
	}
	from := map[string]map[string]bool{}
	var queue []string
	for _, s := range ordered {
		if s.Action != Delete && ((s.Action != NoOp && !s.LifecycleOnly()) || s.Reevaluate) {
			queue = append(queue, s.Address)
		}
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		addr := queue[0]
		queue = queue[1:]
		for _, dep := range dependents[addr] {
			if in[dep] {
				continue
			}
			if from[dep] == nil {
				from[dep] = map[string]bool{}
			}
			from[dep][addr] = true
			if !seen[dep] {
				seen[dep] = true
				queue = append(queue, dep)
			}
		}
	}
	out := make([]Dependent, 0, len(from))
	for _, addr := range slices.Sorted(maps.Keys(from)) {
		out = append(out, Dependent{Address: addr, InputsFrom: slices.Sorted(maps.Keys(from[addr]))})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

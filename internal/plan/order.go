package plan

import (
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/dag"
)

// CycleError is a dependency cycle among a plan's steps, as addresses from
// the first back to itself: [a/x a/y a/x] means a/x depends on a/y, which
// depends on a/x.
type CycleError = dag.CycleError

// order sorts steps for apply (docs/plan.md). A step comes after:
//   - create/update/replace/no-op X: the non-delete steps of X's depends_on;
//   - delete X: the deletes of components whose state dependencies name X
//     (dependents go first), and the non-delete steps of components whose
//     state dependencies name X (they stop using X before it goes).
//
// Among steps whose predecessors are done, deletes come first, then by address.
func order(steps []Step) ([]Step, error) {
	idx := make(map[string]int, len(steps))
	names := make([]string, len(steps))
	for i, s := range steps {
		idx[s.Address] = i
		names[i] = s.Address
	}
	g := dag.New(names)
	edges(steps, idx, g.Edge)
	ids, err := g.Order(func(a, b int) bool {
		sa, sb := &steps[a], &steps[b]
		if da, db := sa.Action == Delete, sb.Action == Delete; da != db {
			return da
		}
		return sa.Address < sb.Address
	})
	if ce, ok := err.(*dag.CycleError); ok {
		ce.Hint = config.CycleHint
	}
	if err != nil {
		return nil, err
	}
	out := make([]Step, len(ids))
	for k, i := range ids {
		out[k] = steps[i]
	}
	return out, nil
}

// inputDeps are the steps a non-delete step waits for: InputDeps, or
// DependsOn for steps built without them.
func (s *Step) inputDeps() []string {
	if s.InputDeps != nil {
		return s.InputDeps
	}
	return s.DependsOn
}

// edges calls edge(before, after) for every ordering constraint among steps
// (the rules of order); idx maps addresses to indexes in steps.
func edges(steps []Step, idx map[string]int, edge func(before, after int)) {
	for i, s := range steps {
		if s.Action != Delete {
			for _, d := range s.inputDeps() {
				if j, ok := idx[d]; ok && j != i && steps[j].Action != Delete {
					edge(j, i)
				}
			}
		}
		if s.Prior == nil {
			continue
		}
		// State dependencies that are being deleted wait for this step.
		for _, d := range s.Prior.Dependencies {
			if j, ok := idx[d]; ok && j != i && steps[j].Action == Delete {
				edge(i, j)
			}
		}
	}
}

// Predecessors returns, for each of steps (a subset of a plan's steps in
// apply order), the indexes of the steps among them that it must wait for
// (docs/plan.md "Order"). Deploy runs steps whose predecessors are all
// done at the same time.
func Predecessors(steps []Step) [][]int {
	idx := make(map[string]int, len(steps))
	for i, s := range steps {
		idx[s.Address] = i
	}
	pred := make([][]int, len(steps))
	edges(steps, idx, func(before, after int) { pred[after] = append(pred[after], before) })
	return pred
}

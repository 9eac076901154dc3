package plan

import (
	"container/heap"
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
)

// CycleError is a dependency cycle, as addresses from the first back to
// itself: [a/x a/y a/x] means a/x depends on a/y, which depends on a/x.
type CycleError struct{ Cycle []string }

func (e *CycleError) Error() string {
	return "dependency cycle: " + strings.Join(e.Cycle, " -> ") + " (remove one of these depends_on entries)"
}

// order sorts steps for apply (docs/plan.md). A step comes after:
//   - create/update/replace/no-op X: the non-delete steps of X's depends_on;
//   - delete X: the deletes of components whose state dependencies name X
//     (dependents go first), and the non-delete steps of components whose
//     state dependencies name X (they stop using X before it goes).
//
// Among steps whose predecessors are done, deletes come first, then by address.
func order(steps []Step) ([]Step, error) {
	n := len(steps)
	idx := make(map[string]int, n)
	for i, s := range steps {
		idx[s.Address] = i
	}
	succ := make([][]int, n)
	indeg := make([]int, n)
	edges(steps, idx, func(before, after int) {
		succ[before] = append(succ[before], after)
		indeg[after]++
	})
	q := &readyQueue{steps: steps}
	for i := range steps {
		if indeg[i] == 0 {
			q.items = append(q.items, i)
		}
	}
	heap.Init(q)
	out := make([]Step, 0, n)
	for q.Len() > 0 {
		i := heap.Pop(q).(int)
		out = append(out, steps[i])
		for _, j := range succ[i] {
			if indeg[j]--; indeg[j] == 0 {
				heap.Push(q, j)
			}
		}
	}
	if len(out) == n {
		return out, nil
	}
	// Some steps never became ready: name a cycle among them.
	graph := map[string][]string{}
	for i := range steps {
		if indeg[i] == 0 {
			continue
		}
		for _, j := range succ[i] {
			if indeg[j] > 0 { // j waits for i: j "depends on" i
				graph[steps[j].Address] = append(graph[steps[j].Address], steps[i].Address)
			}
		}
	}
	if cycles := config.FindCycles(graph); len(cycles) > 0 {
		return nil, &CycleError{Cycle: cycles[0]}
	}
	return nil, fmt.Errorf("plan order: %d steps could not be ordered (report this as a bug)", n-len(out))
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

// readyQueue pops deletes first, then by address.
type readyQueue struct {
	steps []Step
	items []int
}

func (q *readyQueue) Len() int { return len(q.items) }
func (q *readyQueue) Less(a, b int) bool {
	sa, sb := &q.steps[q.items[a]], &q.steps[q.items[b]]
	da, db := sa.Action == Delete, sb.Action == Delete
	if da != db {
		return da
	}
	return sa.Address < sb.Address
}
func (q *readyQueue) Swap(a, b int) { q.items[a], q.items[b] = q.items[b], q.items[a] }
func (q *readyQueue) Push(x any)    { q.items = append(q.items, x.(int)) }
func (q *readyQueue) Pop() any {
	last := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return last
}

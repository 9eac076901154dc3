package dag

import (
	"container/heap"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Graph is nodes 0..n-1 and the edges between them: an edge (before,
// after) makes after wait for before. Names are what a cycle error and the
// ordering among ready nodes show; the executor does not need them.
type Graph struct {
	names []string
	pred  [][]int
	succ  [][]int
}

// New returns a graph of len(names) nodes without edges; node i is names[i].
// Names must be unique for Order to name a cycle; they may repeat when the
// graph is only executed.
func New(names []string) *Graph {
	return &Graph{names: names, pred: make([][]int, len(names)), succ: make([][]int, len(names))}
}

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.names) }

// Name returns node i's name.
func (g *Graph) Name(i int) string { return g.names[i] }

// Edge makes node after wait for node before. Successors keep the order
// their edges were added in: the executor releases them in that order.
func (g *Graph) Edge(before, after int) {
	g.pred[after] = append(g.pred[after], before)
	g.succ[before] = append(g.succ[before], after)
}

// Preds returns the nodes i waits for, in the order their edges were added.
func (g *Graph) Preds(i int) []int { return g.pred[i] }

// Succs returns the nodes waiting for i, in the order their edges were added.
func (g *Graph) Succs(i int) []int { return g.succ[i] }

// Order returns every node after the nodes it waits for (Kahn's
// algorithm). Among the nodes ready at once, the least by less goes first
// (nil less: the smaller name), so the order depends on the graph alone.
// When some nodes wait for each other it returns a *CycleError naming one
// cycle among them (the first FindCycles gives).
func (g *Graph) Order(less func(a, b int) bool) ([]int, error) {
	if less == nil {
		less = func(a, b int) bool { return g.names[a] < g.names[b] }
	}
	n := g.Len()
	waits := make([]int, n)
	q := &readyHeap{less: less}
	for i := range n {
		if waits[i] = len(g.pred[i]); waits[i] == 0 {
			q.items = append(q.items, i)
		}
	}
	heap.Init(q)
	out := make([]int, 0, n)
	for q.Len() > 0 {
		i := heap.Pop(q).(int)
		out = append(out, i)
		for _, j := range g.succ[i] {
			if waits[j]--; waits[j] == 0 {
				heap.Push(q, j)
			}
		}
	}
	if len(out) == n {
		return out, nil
	}
	// The nodes left each wait for one another left: name a cycle among them.
	left := map[string][]string{}
	for i := range n {
		if waits[i] == 0 {
			continue
		}
		for _, p := range g.pred[i] {
			if waits[p] > 0 {
				left[g.names[i]] = append(left[g.names[i]], g.names[p])
			}
		}
	}
	cycles := FindCycles(left)
	if len(cycles) == 0 {
		return nil, fmt.Errorf("dag: %d nodes could not be ordered (report this as a bug)", n-len(out))
	}
	return nil, &CycleError{Cycle: cycles[0]}
}

// CycleError is a cycle of nodes that wait for each other, so none can go
// first.
type CycleError struct {
	// Cycle is the nodes from the first back to itself: [a b a] means a
	// waits for b, which waits for a. It starts at its smallest name.
	Cycle []string
	// Hint, when set, says in parentheses after the cycle what to do.
	Hint string
}

func (e *CycleError) Error() string {
	s := "dependency cycle: " + strings.Join(e.Cycle, " -> ")
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// FindCycles returns the cycles of graph (node -> the nodes it waits for)
// that a depth-first walk meets, each once, as a path that starts and ends
// at its smallest node, e.g. [a/x a/y a/x]. It is deterministic: nodes and
// edges are visited sorted by name.
func FindCycles(graph map[string][]string) [][]string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var cycles [][]string
	seen := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		deps := slices.Clone(graph[n])
		slices.Sort(deps)
		for _, d := range deps {
			switch color[d] {
			case white:
				visit(d)
			case grey:
				cyc := slices.Clone(stack[slices.Index(stack, d):])
				m := slices.Index(cyc, slices.Min(cyc)) // start at the smallest node
				cyc = append(cyc[m:], cyc[:m]...)
				if key := strings.Join(cyc, " "); !seen[key] {
					seen[key] = true
					cycles = append(cycles, append(cyc, cyc[0]))
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, n := range slices.Sorted(maps.Keys(graph)) {
		if color[n] == white {
			visit(n)
		}
	}
	return cycles
}

// readyHeap pops the least ready node first.
type readyHeap struct {
	less  func(a, b int) bool
	items []int
}

func (q *readyHeap) Len() int           { return len(q.items) }
func (q *readyHeap) Less(a, b int) bool { return q.less(q.items[a], q.items[b]) }
func (q *readyHeap) Swap(a, b int)      { q.items[a], q.items[b] = q.items[b], q.items[a] }
func (q *readyHeap) Push(x any)         { q.items = append(q.items, x.(int)) }
func (q *readyHeap) Pop() any {
	last := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return last
}

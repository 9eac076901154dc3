package webui

import (
	"fmt"
	"net/url"

	"github.com/deployer-dev/deployer/internal/dag"
	"github.com/deployer-dev/deployer/internal/stacks"
)

// Layout of the stack graph, in SVG user units (pixels at 100%).
const (
	nodeW, nodeH = 180, 44
	colGap       = 80 // between layers
	rowGap       = 16 // between nodes of a layer
	margin       = 16
)

// graphView is the stack graph drawn on the server: one node per stack
// (plus one per external stack read), one edge per StackReference, the
// stacks in layers by the dag (a stack is one layer right of the last
// stack it reads).
type graphView struct {
	Width, Height int
	Nodes         []nodeView
	Edges         []edgeView
	Err           string
}

type nodeView struct {
	Name, Dir, Href string
	X, Y, TX, TY    int
	W, H            int
	External        bool
	// Outcome is the worst newest-deployment status over the stack's
	// environments ("failed", "success", ...; "" when unknown), Badges
	// one dot per environment.
	Outcome string
	Badges  []badgeView
}

// badgeView is one environment's dot on a node: the status of its newest
// deployment.
type badgeView struct {
	Env, Status, Class, Title string
	CX, CY                    int
}

type edgeView struct {
	From, To, Component string
	Path                string
}

// layoutGraph lays out set: layers from the dag's order (longest path from
// a stack that reads none), nodes of a layer in that order, top to bottom.
func (s *Server) layoutGraph(set *stacks.Set, outcomes map[string][]envOutcome) graphView {
	names, index, external := graphNames(set)
	g := dag.New(names)
	type edge struct {
		from, to  int
		component string
	}
	var edges []edge
	seen := map[[2]int]bool{}
	for _, st := range set.Stacks {
		for _, r := range st.Refs {
			from, to := index[r.Stack], index[st.Name]
			if from == to {
				continue
			}
			edges = append(edges, edge{from, to, st.Name + "." + r.Component})
			if !seen[[2]int{from, to}] {
				seen[[2]int{from, to}] = true
				g.Edge(from, to)
			}
		}
	}
	v := graphView{}
	order, err := g.Order(nil)
	if err != nil {
		// Discover refuses a cycle; a graph that has one anyway is drawn
		// in one column.
		v.Err = s.text(err.Error())
		order = make([]int, len(names))
		for i := range order {
			order[i] = i
		}
	}
	layer := make([]int, len(names))
	rows := map[int]int{}
	row := make([]int, len(names))
	maxLayer, maxRow := 0, 0
	for _, i := range order {
		for _, p := range g.Preds(i) {
			layer[i] = max(layer[i], layer[p]+1)
		}
		if err != nil {
			layer[i] = 0
		}
		row[i] = rows[layer[i]]
		rows[layer[i]]++
		maxLayer, maxRow = max(maxLayer, layer[i]), max(maxRow, row[i])
	}
	pos := func(i int) (int, int) {
		return margin + layer[i]*(nodeW+colGap), margin + row[i]*(nodeH+rowGap)
	}
	for i, n := range names {
		x, y := pos(i)
		nv := s.node(set, n, x, y, external[n], outcomes[n])
		v.Nodes = append(v.Nodes, nv)
	}
	for _, e := range edges {
		x1, y1 := pos(e.from)
		x2, y2 := pos(e.to)
		path := edgePath(x1+nodeW, y1+nodeH/2, x2, y2+nodeH/2, layer[e.to]-layer[e.from])
		v.Edges = append(v.Edges, edgeView{From: s.text(names[e.from]), To: s.text(names[e.to]), Component: s.text(e.component), Path: path})
	}
	v.Width = 2*margin + (maxLayer+1)*(nodeW+colGap) - colGap
	// Room under the last row for the edges that dip under it.
	v.Height = 2*margin + (maxRow+1)*(nodeH+rowGap) - rowGap + nodeH
	return v
}

// node is the stack n drawn at (x, y), with one badge per environment's
// newest deployment (outcomes); a stack outside set is drawn as external.
func (s *Server) node(set *stacks.Set, n string, x, y int, ext bool, outcomes []envOutcome) nodeView {
	nv := nodeView{Name: s.text(n), X: x, Y: y, W: nodeW, H: nodeH, TX: x + 10, TY: y + 18, External: ext}
	if st := set.Get(n); st != nil {
		nv.Dir = s.text(st.Dir)
		nv.Href = "/stacks/" + url.PathEscape(n)
		for k, o := range outcomes {
			b := badgeView{Env: s.text(o.Env), Status: s.text(o.Status), Class: "none", CX: x + nodeW - 10 - 12*k, CY: y + 10}
			switch o.Status {
			case "success":
				b.Class = "ok"
			case "":
				b.Status = "unknown"
			default:
				b.Class = "bad"
			}
			b.Title = b.Env + ": " + b.Status
			if o.Detail != "" {
				b.Title += " (" + s.text(o.Detail) + ")"
			}
			nv.Badges = append(nv.Badges, b)
			if b.Class == "bad" || (b.Class == "ok" && nv.Outcome == "") {
				nv.Outcome = b.Class
			}
		}
	} else {
		nv.Dir = "external"
	}
	return nv
}

// edgePath is the SVG path of an edge from (x1, y1) to (x2, y2) over span
// layers.
func edgePath(x1, y1, x2, y2, span int) string {
	mid := (x1 + x2) / 2
	path := fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, mid, y1, mid, y2, x2, y2)
	if span > 1 {
		// An edge over a layer would cross the nodes between: it
		// dips into the gap under its row (a cubic reaches 3/4 of
		// the way to its control points), lower the farther it goes.
		dip := max(y1, y2) + (nodeH/2+rowGap/2)*4/3 + 4*span
		path = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, x1+colGap, dip, x2-colGap, dip, x2, y2)
	}
	return path
}

// graphNames are the nodes of set's graph: its stacks, then the external
// stacks they read, each once, with their index and whether external.
func graphNames(set *stacks.Set) (names []string, index map[string]int, external map[string]bool) {
	index, external = map[string]int{}, map[string]bool{}
	add := func(n string, ext bool) {
		if _, ok := index[n]; !ok {
			index[n] = len(names)
			names = append(names, n)
			external[n] = ext
		}
	}
	for _, st := range set.Stacks {
		add(st.Name, false)
	}
	for _, st := range set.Stacks {
		for _, r := range st.Refs {
			if r.External {
				add(r.Stack, true)
			}
		}
	}
	return names, index, external
}

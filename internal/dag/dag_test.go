package dag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// graph builds a graph from "a<b" pairs: b waits for a.
func graph(names string, edges ...string) *Graph {
	ns := strings.Fields(names)
	g := New(ns)
	for _, e := range edges {
		before, after, _ := strings.Cut(e, "<")
		g.Edge(slices.Index(ns, before), slices.Index(ns, after))
	}
	return g
}

func names(g *Graph, ids []int) string {
	var out []string
	for _, i := range ids {
		out = append(out, g.Name(i))
	}
	return strings.Join(out, " ")
}

// The order is the same whatever the order nodes and edges were added in:
// each node after what it waits for, ties by name or by the caller's less.
func TestOrderIsDeterministic(t *testing.T) {
	for _, g := range []*Graph{
		graph("d c b a e", "a<c", "b<c", "c<d"),
		graph("a b c d e", "b<c", "a<c", "c<d"),
		graph("e c a d b", "c<d", "b<c", "a<c"),
	} {
		got, err := g.Order(nil)
		if err != nil {
			t.Fatal(err)
		}
		if s := names(g, got); s != "a b c d e" {
			t.Errorf("order = %s, want a b c d e", s)
		}
	}
	g := graph("a b c d", "a<b")
	got, _ := g.Order(func(x, y int) bool { return g.Name(x) > g.Name(y) })
	if s := names(g, got); s != "d c a b" {
		t.Errorf("order by reverse name = %s, want d c a b", s)
	}
}

// A cycle is named from its smallest node, in the direction of waiting,
// and a node that only waits for the cycle is not in it.
func TestOrderNamesACycle(t *testing.T) {
	g := graph("x b a c free", "a<b", "b<c", "c<a", "a<x")
	_, err := g.Order(nil)
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *CycleError", err)
	}
	if want := "dependency cycle: a -> c -> b -> a"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	ce.Hint = "remove one"
	if want := "dependency cycle: a -> c -> b -> a (remove one)"; ce.Error() != want {
		t.Errorf("with a hint: %q, want %q", ce, want)
	}
}

func TestFindCyclesReportsEachCycleOnce(t *testing.T) {
	got := FindCycles(map[string][]string{
		"b": {"a"}, "a": {"b", "c"}, "c": {"d"}, "d": {"c"}, "e": {"missing"},
	})
	want := [][]string{{"a", "b", "a"}, {"c", "d", "c"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cycles = %v, want %v", got, want)
	}
}

// record runs g with ex (Call and Done filled here unless set) and
// returns the calls in the order they started.
func record(t *testing.T, ctx context.Context, g *Graph, ex *Executor[error], fail ...string) (*Run, []string, error) {
	t.Helper()
	var mu sync.Mutex
	var calls []string
	if ex.Call == nil {
		ex.Call = func(_ context.Context, ids []int) error {
			mu.Lock()
			calls = append(calls, names(g, ids))
			mu.Unlock()
			for _, i := range ids {
				if slices.Contains(fail, g.Name(i)) {
					return fmt.Errorf("%s failed", g.Name(i))
				}
			}
			return nil
		}
	}
	ex.Done = func(r *Run, ids []int, err error) error {
		if err == nil {
			for _, i := range ids {
				r.Finish(i)
			}
		}
		return err
	}
	r, err := ex.Run(ctx, g)
	return r, calls, err
}

func states(r *Run, g *Graph) string {
	var out []string
	for i := range g.Len() {
		out = append(out, fmt.Sprintf("%s=%d", g.Name(i), r.State(i)))
	}
	return strings.Join(out, " ")
}

// One call at a time runs the nodes in the order they became ready.
func TestExecutorRunsEachNodeAfterWhatItWaitsFor(t *testing.T) {
	g := graph("a b c d", "a<c", "c<d", "b<d")
	r, calls, err := record(t, context.Background(), g, &Executor[error]{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(calls, ","); s != "a,b,c,d" {
		t.Errorf("calls = %s, want a,b,c,d", s)
	}
	if s := states(r, g); s != "a=2 b=2 c=2 d=2" {
		t.Errorf("states = %s, want all done", s)
	}
}

// SkipDependents: what waits for a failed node, directly or not, is
// skipped and told why; the rest goes on.
func TestExecutorSkipsDependentsOfAFailure(t *testing.T) {
	g := graph("a b c d e", "a<b", "b<c", "a<d", "e<d")
	var skips []string
	ex := &Executor[error]{Limit: 1, Policy: SkipDependents, Skip: func(n, cause int) {
		skips = append(skips, g.Name(n)+" by "+g.Name(cause))
	}}
	r, calls, err := record(t, context.Background(), g, ex, "a")
	if err == nil || err.Error() != "a failed" {
		t.Errorf("err = %v, want a failed", err)
	}
	if s := strings.Join(calls, ","); s != "a,e" {
		t.Errorf("calls = %s, want a,e", s)
	}
	if s := strings.Join(skips, ","); s != "b by a,c by b,d by a" {
		t.Errorf("skips = %s", s)
	}
	if s := states(r, g); s != "a=3 b=4 c=4 d=4 e=2" {
		t.Errorf("states = %s", s)
	}
}

// StopOnFailure: nothing starts after a failure.
func TestExecutorStopsOnFailure(t *testing.T) {
	g := graph("a b c")
	r, calls, err := record(t, context.Background(), g, &Executor[error]{Limit: 1}, "a")
	if err == nil || strings.Join(calls, ",") != "a" {
		t.Errorf("calls = %v, err = %v: want only a, failed", calls, err)
	}
	if s := states(r, g); s != "a=3 b=0 c=0" {
		t.Errorf("states = %s", s)
	}
}

// Never more than Limit calls run at once, and as many as Limit do.
func TestExecutorRespectsTheBound(t *testing.T) {
	const n, limit = 12, 3
	g := New(make([]string, n))
	var inflight, most atomic.Int32
	started := make(chan int, n)
	release := make(chan struct{})
	ex := &Executor[error]{Limit: limit, Call: func(_ context.Context, ids []int) error {
		now := inflight.Add(1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		started <- ids[0]
		<-release
		inflight.Add(-1)
		return nil
	}}
	go func() {
		open, left := 0, n
		for left > 0 {
			for open < min(limit, left) {
				<-started
				open++
			}
			release <- struct{}{}
			open--
			left--
		}
	}()
	if _, _, err := record(t, context.Background(), g, ex); err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m != limit {
		t.Errorf("at most %d calls ran at once, want %d", m, limit)
	}
}

// Once ctx is cancelled no call starts; the running one ends, its
// dependents stay waiting, and the cause is the run's error.
func TestExecutorStopsStartingOnCancel(t *testing.T) {
	g := graph("a b c", "a<b")
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted")
	ex := &Executor[error]{Limit: 1, Call: func(ctx context.Context, ids []int) error {
		cancel(stop)
		<-ctx.Done()
		return nil
	}}
	r, _, err := record(t, ctx, g, ex)
	if !errors.Is(err, stop) {
		t.Errorf("err = %v, want the cause", err)
	}
	if s := states(r, g); s != "a=2 b=0 c=0" {
		t.Errorf("states = %s, want a done, b and c waiting", s)
	}
}

// Pick batches: a call takes ready nodes and nodes whose waits are all in
// the same call; a node may be finished without a call.
func TestExecutorPickBatches(t *testing.T) {
	g := graph("a b c d e f", "a<b", "b<c", "d<f", "e<f")
	ex := &Executor[error]{Limit: 2}
	ex.Pick = func(r *Run) []int {
		var ids []int
		in := map[int]bool{}
		for i := range g.Len() {
			if g.Name(i) == "b" {
				if r.IsReady(i) {
					r.Finish(i) // nothing to do
				}
				continue
			}
			if r.State(i) == Waiting && (r.IsReady(i) || r.WaitsOnlyFor(i, in)) {
				in[i] = true
				ids = append(ids, i)
			}
		}
		return ids
	}
	r, calls, err := record(t, context.Background(), g, ex)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(calls, ","); s != "a d e f,c" {
		t.Errorf("calls = %s, want a d e f then c (b finished without a call)", s)
	}
	if s := states(r, g); s != "a=2 b=2 c=2 d=2 e=2 f=2" {
		t.Errorf("states = %s", s)
	}
}

// Excluded nodes never run and count as skipped.
func TestExecutorExcludes(t *testing.T) {
	g := graph("a b")
	ex := &Executor[error]{Exclude: func(i int) bool { return i == 0 }}
	r, calls, err := record(t, context.Background(), g, ex)
	if err != nil || strings.Join(calls, ",") != "b" || r.State(0) != Skipped {
		t.Errorf("calls = %v, err = %v, a = %d: want only b run", calls, err, r.State(0))
	}
}

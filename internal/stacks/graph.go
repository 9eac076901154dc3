package stacks

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/dag"
)

// Set is the stacks under a root, in dependency order.
type Set struct {
	// Root is the directory searched, absolute.
	Root string
	// Env is Options.Env: the environment the edges were resolved for.
	Env string
	// Stacks are every stack found, each after the stacks it reads (its
	// producers); stacks that do not depend on each other are ordered by name.
	Stacks []*Stack

	byName    map[string]*Stack
	producers map[string][]string
	consumers map[string][]string
}

// Get returns the stack named name, or nil.
func (s *Set) Get(name string) *Stack { return s.byName[name] }

// Producers returns the stacks of the set that name reads, sorted.
func (s *Set) Producers(name string) []string { return s.producers[name] }

// Consumers returns the stacks of the set that read name, sorted.
func (s *Set) Consumers(name string) []string { return s.consumers[name] }

// Downstream returns names and every stack that reads one of them,
// directly or through other stacks.
func (s *Set) Downstream(names []string) map[string]bool {
	out := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if out[n] {
			return
		}
		out[n] = true
		for _, c := range s.consumers[n] {
			visit(c)
		}
	}
	for _, n := range names {
		visit(n)
	}
	return out
}

// edge reports whether ref is an edge of the graph for the set's
// environment: it names a stack of the set, in the run's environment (or,
// with no environment, in any).
func (s *Set) edge(r Ref) bool {
	if s.byName[r.Stack] == nil {
		return false
	}
	return r.Env == "" || s.Env == "" || r.Env == s.Env
}

// CycleError: stacks that read each other's outputs, so none can go first.
// It unwraps to the *dag.CycleError of the cycle.
type CycleError struct {
	// Cycle is the stacks in the order they read each other, the first
	// (the smallest name) repeated at the end: [a b a] means a reads b and
	// b reads a.
	Cycle []string
	// Via names the StackReference of each step: "a (path) reads b through svc/comp".
	Via []string
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("stacks read each other's outputs in a cycle: %s (%s): no order deploys a producer before its consumers; remove one of these StackReference components",
		strings.Join(e.Cycle, " -> "), strings.Join(e.Via, "; "))
}

// Unwrap returns the cycle as the graph package names it.
func (e *CycleError) Unwrap() error { return &dag.CycleError{Cycle: e.Cycle} }

// order fills the edges and Stacks (ties by name), or returns a
// *CycleError.
func (s *Set) order() error {
	s.producers, s.consumers = map[string][]string{}, map[string][]string{}
	for _, st := range s.byName {
		seen := map[string]bool{}
		for _, r := range st.Refs {
			if s.edge(r) && !seen[r.Stack] {
				seen[r.Stack] = true
				s.producers[st.Name] = append(s.producers[st.Name], r.Stack)
				s.consumers[r.Stack] = append(s.consumers[r.Stack], st.Name)
			}
		}
	}
	for _, m := range []map[string][]string{s.producers, s.consumers} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	names := slices.Sorted(maps.Keys(s.byName))
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	g := dag.New(names)
	for i, n := range names {
		for _, p := range s.producers[n] {
			g.Edge(index[p], i)
		}
	}
	ids, err := g.Order(nil)
	var ce *dag.CycleError
	if errors.As(err, &ce) {
		return s.cycle(ce.Cycle)
	}
	if err != nil {
		return err
	}
	s.Stacks = s.Stacks[:0]
	for _, i := range ids {
		s.Stacks = append(s.Stacks, s.byName[names[i]])
	}
	return nil
}

// cycle names the StackReference behind each step of cyc.
func (s *Set) cycle(cyc []string) error {
	e := &CycleError{Cycle: cyc}
	for j := 0; j+1 < len(cyc); j++ {
		st := s.byName[cyc[j]]
		for _, r := range st.Refs {
			if r.Stack == cyc[j+1] && s.edge(r) {
				e.Via = append(e.Via, fmt.Sprintf("%s reads %s through %s in %s", cyc[j], cyc[j+1], r.Component, path.Join(st.Dir, ConfigFile)))
				break
			}
		}
	}
	return e
}

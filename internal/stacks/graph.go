package stacks

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
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
type CycleError struct {
	// Cycle is the stacks in the order they read each other, the first
	// repeated at the end: [a b a] means a reads b and b reads a.
	Cycle []string
	// Via names the StackReference of each step: "a (path) reads b through svc/comp".
	Via []string
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("stacks read each other's outputs in a cycle: %s (%s): no order deploys a producer before its consumers; remove one of these StackReference components",
		strings.Join(e.Cycle, " -> "), strings.Join(e.Via, "; "))
}

// order fills the edges and Stacks (Kahn's algorithm, ties by name), or
// returns a *CycleError.
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
	waiting := map[string]int{}
	var ready []string
	for name := range s.byName {
		waiting[name] = len(s.producers[name])
		if waiting[name] == 0 {
			ready = append(ready, name)
		}
	}
	s.Stacks = s.Stacks[:0]
	for len(ready) > 0 {
		slices.Sort(ready)
		n := ready[0]
		ready = ready[1:]
		s.Stacks = append(s.Stacks, s.byName[n])
		for _, c := range s.consumers[n] {
			if waiting[c]--; waiting[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	if len(s.Stacks) == len(s.byName) {
		return nil
	}
	return s.cycle(waiting)
}

// cycle finds one cycle among the stacks still waiting.
func (s *Set) cycle(waiting map[string]int) error {
	var start string
	for _, n := range slices.Sorted(maps.Keys(waiting)) {
		if waiting[n] > 0 {
			start = n
			break
		}
	}
	// Walk producers that are still waiting until a stack repeats: every
	// waiting stack has one.
	pos := map[string]int{}
	var walked []string
	for n := start; ; {
		if i, ok := pos[n]; ok {
			cyc := append(walked[i:], n)
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
		pos[n] = len(walked)
		walked = append(walked, n)
		for _, p := range s.producers[n] {
			if waiting[p] > 0 {
				n = p
				break
			}
		}
	}
}

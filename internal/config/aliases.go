package config

import (
	"gopkg.in/yaml.v3"
)

// MaxAliasValues bounds how many values YAML aliases (*name, and "<<: *name"
// merge keys) may add to deployer.yaml once expanded: an alias counts the
// size of what it names, so nested aliases multiply ("billion laughs"). The
// loader walks the node tree, where yaml.v3's own "excessive aliasing" check
// of Decode does not apply, so the tree is measured before the walk
// (docs/configuration.md, "Limits on input").
const MaxAliasValues = 100_000

// checkAliases measures the values every alias adds, in document order, and
// reports the alias at which the total passes MaxAliasValues, or an alias
// that names a node containing itself. It visits each node once.
func (l *loader) checkAliases(doc *yaml.Node) bool {
	a := aliasMeter{size: map[*yaml.Node]int{}, busy: map[*yaml.Node]bool{}}
	bad := a.walk(doc)
	if bad == nil {
		return true
	}
	if a.cycle {
		l.add(bad.Line, "", "the alias *%s refers to a value that contains it (point the alias at a value defined before it, outside itself)", bad.Value)
		return false
	}
	l.add(bad.Line, "", "the YAML aliases expand to more than %d values by this alias (*%s): nested aliases multiply (write the values out, or alias smaller values fewer times)",
		MaxAliasValues, bad.Value)
	return false
}

type aliasMeter struct {
	size  map[*yaml.Node]int  // expanded size of nodes that aliases name
	busy  map[*yaml.Node]bool // being measured: an alias back to it is a cycle
	added int                 // values added by aliases so far
	cycle bool
}

// walk visits the tree as written; it returns the offending alias node.
func (a *aliasMeter) walk(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		s, ok := a.expanded(n.Alias)
		if !ok {
			a.cycle = true
			return n
		}
		a.added += s
		if a.added > MaxAliasValues {
			return n
		}
		return nil
	}
	a.busy[n] = true
	defer delete(a.busy, n)
	for _, c := range n.Content {
		if bad := a.walk(c); bad != nil {
			return bad
		}
	}
	return nil
}

// expanded is the number of nodes n stands for once every alias in it is
// expanded, capped just above MaxAliasValues; false on a cycle.
func (a *aliasMeter) expanded(n *yaml.Node) (int, bool) {
	if n == nil {
		return 0, true
	}
	if s, ok := a.size[n]; ok {
		return s, true
	}
	if a.busy[n] {
		return 0, false
	}
	if n.Kind == yaml.AliasNode {
		return a.expanded(n.Alias)
	}
	a.busy[n] = true
	defer delete(a.busy, n)
	total := 1
	for _, c := range n.Content {
		s, ok := a.expanded(c)
		if !ok {
			return 0, false
		}
		total = min(total+s, MaxAliasValues+1)
	}
	a.size[n] = total
	return total, true
}

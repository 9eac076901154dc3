package pulumi

import (
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/deployer-dev/deployer/internal/plan"
)

// The resource layout (docs/pulumi.md#resource-layout): every resource of
// a component is registered at the root of the Pulumi stack, named after
// the component ("service/component" -> "service-component", or that name
// with a suffix of its kind, Kind.Suffixes). deployer registers no resource
// of its own around them, so Pulumi steps through and checkpoints exactly
// the resources a user's own program would.
//
// The previous layout kept a component's resources under a component
// resource "deployer:component:{Kind}" named after the component (the
// wrapper). A stack deployed with it migrates at its next up: each
// resource carries an alias naming its URN under the wrapper, so Pulumi
// renames it (same id, no create, no delete), and the wrappers, no longer
// declared, are dropped from Pulumi's state (they exist nowhere else).

// ComponentType is the type token prefix of the wrapper of the previous
// layout: a component of kind K was a component resource
// "deployer:component:K". The program registers none; results and refresh
// still read resources under one until an up has moved them.
const ComponentType = "deployer:component:"

// options returns the options of the resource named name that r's
// component registers: the one place per-resource options are decided
// (protect, depends_on, the aliases of moves and of the previous layout,
// the import of an existing resource). A kind's own options (version,
// ignoreChanges) come after them.
func (r *Registration) options(name string) []pulumi.ResourceOption {
	opts := []pulumi.ResourceOption{pulumi.Protect(r.comp.Protect)}
	if r.comp.ImportID != "" {
		// Only kinds of one resource can be imported (Kind.importable):
		// name is that resource.
		opts = append(opts, pulumi.Import(pulumi.ID(r.comp.ImportID)))
	}
	if len(r.deps) > 0 {
		opts = append(opts, pulumi.DependsOn(r.deps))
	}
	if a := childAliases(r.comp, name); len(a) > 0 {
		opts = append(opts, pulumi.Aliases(a))
	}
	return opts
}

// childAliases are the names a resource named name of component c may
// still have in Pulumi's state: the same suffix after each former name of
// the component (a move), and its URN under the wrapper of the previous
// layout when deployer's state recorded one (c.Wrapper). An alias that
// matches nothing is ignored by Pulumi.
func childAliases(c Component, name string) []pulumi.Alias {
	suffix, ok := strings.CutPrefix(name, c.Name())
	var out []pulumi.Alias
	if ok {
		for _, f := range c.Aliases {
			out = append(out, pulumi.Alias{Name: pulumi.String(f + suffix)})
		}
	}
	if c.Wrapper != "" {
		old := name
		if ok {
			old = urnName(c.Wrapper) + suffix
		}
		out = append(out, pulumi.Alias{Name: pulumi.String(old), ParentURN: pulumi.URN(c.Wrapper)})
	}
	return out
}

// wrapperOf returns the URN of the wrapper (previous layout) that the
// URNs recorded for s's component place its resources under, or "".
func wrapperOf(s plan.Step) string {
	if s.Prior == nil {
		return ""
	}
	info, err := InfoOf(s.Prior.EngineData)
	if err != nil || info == nil {
		return ""
	}
	urn := info.URN
	if urn == "" && len(info.URNs) > 0 {
		urn = info.URNs[0]
	}
	// urn:pulumi:{env}::{project}::deployer:component:{Kind}${type}::{name}
	i := strings.Index(urn, "::"+ComponentType)
	if i < 0 {
		return ""
	}
	rest := urn[i+2:]
	kind, _, ok := strings.Cut(rest, "$")
	if !ok {
		return ""
	}
	return urn[:i+2] + kind + "::" + recordedName(info)
}

// urnName is the name part of a URN (after its last "::").
func urnName(urn string) string {
	return urn[strings.LastIndex(urn, "::")+2:]
}

// childNames are the names of the resources a component named name of the
// given kinds registers (its name, and its name with each suffix).
func childNames(name string, kinds ...string) []string {
	out := []string{name}
	for _, k := range kinds {
		if kind, ok := Lookup(k); ok {
			for _, s := range kind.Suffixes {
				out = append(out, name+s)
			}
		}
	}
	return out
}

// isWrapper reports whether r is a wrapper of the previous layout.
func isWrapper(r snapResource) bool { return strings.HasPrefix(r.Type, ComponentType) }

// isRoot reports whether r is a resource at the root of the stack: not
// the stack itself, not a provider, not under another resource.
func isRoot(r snapResource) bool {
	if r.Type == "pulumi:pulumi:Stack" || strings.HasPrefix(r.Type, "pulumi:providers:") || isWrapper(r) {
		return false
	}
	return r.Parent == "" || strings.Contains(r.Parent, "::pulumi:pulumi:Stack::")
}

// owner tells which resources of Pulumi's state belong to a step's
// component: those at the root named after it (under its own name or,
// not yet renamed by an up, a former one: formerNames), and those still
// under a wrapper of the previous layout with one of those names.
type owner struct{ names, wrappers map[string]bool }

func ownerOfStep(st plan.Step) owner {
	kinds := []string{st.Kind}
	if st.Prior != nil && st.Prior.Kind != st.Kind {
		kinds = append(kinds, st.Prior.Kind)
	}
	o := owner{names: map[string]bool{}, wrappers: map[string]bool{}}
	for _, n := range append([]string{Component{Address: st.Address}.Name()}, formerNames(st)...) {
		o.wrappers[n] = true
		for _, c := range childNames(n, kinds...) {
			o.names[c] = true
		}
	}
	return o
}

// holds reports whether r is one of the component's resources.
func (o owner) holds(r snapResource) bool {
	if isRoot(r) {
		return o.names[urnName(r.URN)]
	}
	return strings.Contains(r.Parent, "::"+ComponentType) && o.wrappers[urnName(r.Parent)]
}

// held returns the resources of step st's component in Pulumi's state
// (owner), sorted by URN.
func (s *snapshot) held(st plan.Step) []snapResource {
	o := ownerOfStep(st)
	var out []snapResource
	for _, r := range s.Resources {
		if o.holds(r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URN < out[j].URN })
	return out
}

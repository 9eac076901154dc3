package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// DependentsOutside returns, for a destroy of scope, the components in the
// state outside scope that depend (directly, by deployer.yaml's depends_on
// or by the dependencies the state recorded) on a component of the state
// in scope: by address, the addresses in scope each depends on. Empty when
// scope is the whole stack.
func DependentsOutside(desired *config.Resolved, st *statestore.State, scope string) map[string][]string {
	out := map[string][]string{}
	if scope == "" || st == nil {
		return out
	}
	for addr, r := range st.Resources {
		if InScope(addr, scope) {
			continue
		}
		deps := slices.Clone(r.Dependencies)
		if c := desired.Components[addr]; c != nil {
			deps = append(deps, c.DependsOn...)
		}
		for _, d := range deps {
			if st.Resources[d] != nil && InScope(d, scope) && !slices.Contains(out[addr], d) {
				out[addr] = append(out[addr], d)
			}
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// WithDependents returns scope widened by every component of the state
// that depends, directly or through others, on one in it (destroy
// --with-dependents); components excluded stay excluded.
func WithDependents(desired *config.Resolved, st *statestore.State, scope string) string {
	for {
		deps := DependentsOutside(desired, st, scope)
		var add []string
		for _, addr := range slices.Sorted(maps.Keys(deps)) {
			if !excluded(addr, scope) {
				add = append(add, addr)
			}
		}
		if len(add) == 0 {
			return scope
		}
		targets, exclude := ScopeTerms(scope)
		scope = Scope(append(targets, add...), exclude)
	}
}

func excluded(addr, scope string) bool {
	_, exclude := ScopeTerms(scope)
	for _, e := range exclude {
		if under(addr, e) {
			return true
		}
	}
	return false
}

// DependentsError refuses a destroy of components that others outside its
// targets still depend on (docs/commands.md#deployer-destroy); nothing was locked, run or
// written.
type DependentsError struct {
	// Dependents are, by address, the targeted components each depends on.
	Dependents map[string][]string
	// Scope is the destroy's scope (InScope): a dependent its --exclude
	// leaves out is named as such, since --with-dependents keeps it out.
	Scope string
}

func (e *DependentsError) Error() string {
	var b strings.Builder
	b.WriteString("refusing to destroy components that others still depend on:")
	var left, others bool
	for _, addr := range slices.Sorted(maps.Keys(e.Dependents)) {
		fmt.Fprintf(&b, "\n  %s depends on %s", addr, strings.Join(e.Dependents[addr], ", "))
		if excluded(addr, e.Scope) {
			b.WriteString(" (left out by --exclude)")
			left = true
		} else {
			others = true
		}
	}
	if others {
		b.WriteString("\ndestroy them too with --with-dependents (dependents first), or destroy or change them first")
	}
	if left {
		b.WriteString("\n--with-dependents does not destroy what --exclude leaves out: exclude what they depend on too, or drop that --exclude")
	}
	b.WriteString("; nothing was changed")
	return b.String()
}

// UndeployedDependencies returns, for a plan (not a destroy) of scope, the
// components in scope that depend (deployer.yaml's depends_on) on a
// component outside scope that st does not hold: by address, those
// dependencies, sorted. Outside the scope a dependency is taken as the
// state holds it (docs/plan.md#scope), so such a component would run with
// that dependency's inputs empty. Empty when scope is the whole stack.
func UndeployedDependencies(desired *config.Resolved, st *statestore.State, scope string) map[string][]string {
	out := map[string][]string{}
	if scope == "" {
		return out
	}
	for addr, c := range desired.Components {
		if !InScope(addr, scope) {
			continue
		}
		for _, d := range c.DependsOn {
			if InScope(d, scope) || desired.Components[d] == nil || (st != nil && st.Resources[d] != nil) {
				continue
			}
			out[addr] = append(out[addr], d)
		}
		slices.Sort(out[addr])
	}
	return out
}

// DeployerExitCode is 6, refused (docs/exit-codes.md).
func (e *DependentsError) DeployerExitCode() int { return exitcode.Refused }

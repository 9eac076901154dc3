package plan

import (
	"iter"
	"strings"
)

// A scope says which components a plan acts on (docs/plan.md#scope). It is
// one string, the plan's "scope", so that a saved plan binds it as it binds
// the stack and the environment:
//
//	""                          the whole stack
//	"svc" / "svc/comp"          one service / one component (--service, --component)
//	"app/api,edge/cdn"          several components (--component repeated)
//	"app,!app/worker"           a term starting with "!" leaves that service or component out (--exclude)
//
// A scope of exclusions only ("!data/db") is the whole stack but those.

// Scope joins targets (services or components) and exclusions into a scope.
func Scope(targets, exclude []string) string {
	terms := make([]string, 0, len(targets)+len(exclude))
	terms = append(terms, targets...)
	for _, e := range exclude {
		terms = append(terms, "!"+e)
	}
	return strings.Join(terms, ",")
}

// ScopeTerms splits scope into its targets and its exclusions (Scope's inverse).
func ScopeTerms(scope string) (targets, exclude []string) {
	if scope == "" {
		return nil, nil
	}
	for term := range strings.SplitSeq(scope, ",") {
		if e, ok := strings.CutPrefix(term, "!"); ok {
			exclude = append(exclude, e)
		} else {
			targets = append(targets, term)
		}
	}
	return targets, exclude
}

// InScope reports whether address "svc/comp" is in scope: under one of its
// targets (any when it has none) and under none of its exclusions.
func InScope(addr, scope string) bool {
	if scope == "" {
		return true
	}
	if !strings.ContainsAny(scope, ",!") {
		return under(addr, scope)
	}
	in, targeted := false, false
	for term := range strings.SplitSeq(scope, ",") {
		if e, ok := strings.CutPrefix(term, "!"); ok {
			if under(addr, e) {
				return false
			}
			continue
		}
		targeted = true
		in = in || under(addr, term)
	}
	return in || !targeted
}

// inScope is the set of the addresses of addrs that are in scope
// (InScope), each asked once: what a plan tests its components against.
func inScope(scope string, addrs ...iter.Seq[string]) map[string]bool {
	in := map[string]bool{}
	for _, seq := range addrs {
		for addr := range seq {
			if InScope(addr, scope) {
				in[addr] = true
			}
		}
	}
	return in
}

// under reports whether addr is the address term or a component of the service term.
func under(addr, term string) bool {
	return addr == term || (strings.HasPrefix(addr, term) && len(addr) > len(term) && addr[len(term)] == '/')
}

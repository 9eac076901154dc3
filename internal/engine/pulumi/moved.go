package pulumi

import (
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/plan"
)

// A moved component (docs/operations.md#moves) keeps its resources: the
// program declares it under its new name, and each of its resources gets
// its name with each former name of the component in place of the current
// one as a Pulumi alias (childAliases; every kind names its resources
// r.Name or r.Name+"-..."). After one `up` Pulumi's state holds the new
// names; an alias that matches nothing is ignored.

// formerNames returns the Pulumi names s's component may still have in
// Pulumi's state, other than its own: the name of the address a moved:
// entry brought it from (Step.MovedFrom), and the name its recorded URNs
// carry (deployer state mv moves deployer's entry only, so Pulumi learns
// the new name at the component's next up). Nil when there is none.
func formerNames(s plan.Step) []string {
	name := Component{Address: s.Address}.Name()
	var out []string
	add := func(n string) {
		if n != "" && n != name && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if s.MovedFrom != "" {
		add(Component{Address: s.MovedFrom}.Name())
	}
	if s.Prior != nil && IsPulumiKind(s.Prior.Kind) {
		if info, err := InfoOf(s.Prior.EngineData); err == nil && info != nil {
			add(recordedName(info))
		}
	}
	return out
}

// recordedName is the component name a recorded Info's URNs carry: the
// shortest name of its children (the one named r.Name); "" without URNs.
func recordedName(info *Info) string {
	urns := info.URNs
	if info.URN != "" {
		urns = append([]string{info.URN}, urns...)
	}
	best := ""
	for _, u := range urns {
		i := strings.LastIndex(u, "::")
		if i < 0 {
			continue
		}
		if n := u[i+2:]; best == "" || len(n) < len(best) {
			best = n
		}
	}
	return best
}

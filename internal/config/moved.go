package config

import (
	"fmt"
	"slices"
	"strings"
)

// Move is one entry of the top-level moved: list (docs/operations.md#moves):
// the component (or the whole service) at From in the state now lives at
// To in deployer.yaml. A plan moves its state entry, with its outputs,
// engine record, lifecycle and history, instead of deleting and creating.
type Move struct {
	From string `yaml:"from"` // "svc/comp", or "svc" for a whole service
	To   string `yaml:"to"`   // same shape as From
}

// IsService reports whether the move renames a whole service.
func (m Move) IsService() bool { return !strings.Contains(m.From, "/") }

// String is "FROM -> TO".
func (m Move) String() string { return m.From + " -> " + m.To }

// checkMoves checks moved: entries against the file: both ends written and
// of one shape (two components, or two services), valid names, from no
// longer declared (a moved-from address still in the file would be planned
// twice), to declared or the from of another entry (a chain, followed to
// its end, which must be declared; a cycle is an error), and no address
// moved from twice.
func (l *loader) checkMoves(c *Config) {
	from := map[string]int{}
	for i, m := range c.Moved {
		p := fmt.Sprintf("moved[%d]", i)
		line := l.line(p)
		if chain, cycle := moveChain(c.Moved, m); cycle {
			l.add(line, p, "the moves form a cycle: %s: a component cannot move back to where it was; remove one of these entries",
				strings.Join(chain, " -> "))
			continue
		}
		if msg := moveProblem(c, m); msg != "" {
			l.add(line, p, "%s", msg)
			continue
		}
		if first, dup := from[m.From]; dup {
			l.add(line, p, "%s is moved twice (first in moved[%d]): keep one entry", m.From, first)
			continue
		}
		from[m.From] = i
	}
}

// moveProblem is what is wrong with m in c, or "".
func moveProblem(c *Config, m Move) string {
	if m.From == "" || m.To == "" {
		return "write both from: and to:, e.g. {from: data/db, to: data/database}"
	}
	if strings.Contains(m.From, "/") != strings.Contains(m.To, "/") {
		return fmt.Sprintf("from %q and to %q must both be components (SERVICE/NAME) or both services (SERVICE)", m.From, m.To)
	}
	if m.From == m.To {
		return fmt.Sprintf("from and to are both %q: remove the entry", m.From)
	}
	for _, a := range []string{m.From, m.To} {
		if err := ValidateAddress(a); err != nil {
			return err.Error()
		}
	}
	declared := func(a string) bool {
		if strings.Contains(a, "/") {
			return c.component(a) != nil
		}
		return c.Services[a] != nil
	}
	if declared(m.From) {
		return fmt.Sprintf("%s is still declared under services: a moved-from address must be gone from the file (rename it to %s)", m.From, m.To)
	}
	chain, _ := moveChain(c.Moved, m)
	if end := chain[len(chain)-1]; end != m.To {
		// A chain (a -> b, then b -> c): b need not be declared, c must.
		if !declared(end) {
			return fmt.Sprintf("%s is not declared under services%s: the moves %s end there", end,
				didYouMean(end, c.addresses(m.IsService()), ""), strings.Join(chain, " -> "))
		}
		return ""
	}
	if !declared(m.To) {
		return fmt.Sprintf("%s is not declared under services%s: moved to: names where the component now is", m.To, didYouMean(m.To, c.addresses(m.IsService()), ""))
	}
	return ""
}

// addresses are the components ("svc/comp") of c, or its services, sorted.
func (c *Config) addresses(services bool) []string {
	var out []string
	for svc, s := range c.Services {
		if services {
			out = append(out, svc)
			continue
		}
		for name := range s.Components {
			out = append(out, Address(svc, name))
		}
	}
	slices.Sort(out)
	return out
}

// moveChain is m followed through the entries of moves: m.From, m.To, and
// the to of each entry whose from is the address before, to its end
// (Terraform follows chained moved blocks so). cycle is true when the
// chain comes back to an address it passed; the chain then ends there.
func moveChain(moves []Move, m Move) (chain []string, cycle bool) {
	next := map[string]string{}
	for _, e := range moves {
		if _, dup := next[e.From]; !dup {
			next[e.From] = e.To
		}
	}
	chain = []string{m.From, m.To}
	seen := map[string]bool{m.From: true, m.To: true}
	for at := m.To; ; {
		to, ok := next[at]
		if !ok {
			return chain, false
		}
		chain = append(chain, to)
		if seen[to] {
			return chain, true
		}
		seen[to], at = true, to
	}
}

// ChainedMoves are moves with each to followed through the chain to its
// end (moveChain): a state at a of {a -> b}, {b -> c} moves to c at once,
// and one at b too. Entries of a cycle stay as written (checkMoves
// refuses them).
func ChainedMoves(moves []Move) []Move {
	out := slices.Clone(moves)
	for i, m := range out {
		if chain, cycle := moveChain(moves, m); !cycle {
			out[i].To = chain[len(chain)-1]
		}
	}
	return out
}

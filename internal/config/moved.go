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
// twice), to declared, and no address moved from twice.
func (l *loader) checkMoves(c *Config) {
	from := map[string]int{}
	for i, m := range c.Moved {
		p := fmt.Sprintf("moved[%d]", i)
		line := l.line(p)
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

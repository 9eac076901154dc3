package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
)

// Target is what a command acts on: a stack/environment, optionally narrowed
// to one service, one component or several components, less the services
// and components excluded (docs/commands.md#deploy, docs/plan.md#scope).
type Target struct {
	Stack, Env string
	Service    string // --service
	Component  string // --component SVC/C: Service and Component both set
	// Components are --component given more than once (or as a comma
	// list), "svc/comp" each, joined by commas; Service and Component are
	// then empty. A string, so that a Target stays comparable.
	Components string
	// Exclude are --exclude, "svc" or "svc/comp" each, joined by commas:
	// left out of the plan.
	Exclude string
}

// LockKey returns the key of the target's lock level (docs/design.md#lock-keys):
// several components take their service's lock when they share one, else
// the stack's.
func (t Target) LockKey() string {
	switch {
	case t.Component != "":
		return lockmgr.ComponentKey(t.Stack, t.Env, t.Service, t.Component)
	case t.Service != "":
		return lockmgr.ServiceKey(t.Stack, t.Env, t.Service)
	case t.Components != "":
		addrs := strings.Split(t.Components, ",")
		svc, _ := config.SplitAddress(addrs[0])
		for _, addr := range addrs[1:] {
			if s, _ := config.SplitAddress(addr); s != svc {
				return lockmgr.StackKey(t.Stack, t.Env)
			}
		}
		return lockmgr.ServiceKey(t.Stack, t.Env, svc)
	default:
		return lockmgr.StackKey(t.Stack, t.Env)
	}
}

// Scope returns the plan scope (plan.InScope): "", "svc", "svc/comp", or
// the components and exclusions as a list.
func (t Target) Scope() string {
	return plan.Scope(t.Terms())
}

// Terms are the target's scope as its flags name it: the services or
// components it targets (none: the whole stack) and those it excludes.
func (t Target) Terms() (targets, exclude []string) {
	switch {
	case t.Component != "":
		targets = []string{config.Address(t.Service, t.Component)}
	case t.Service != "":
		targets = []string{t.Service}
	case t.Components != "":
		targets = strings.Split(t.Components, ",")
	}
	return targets, list(t.Exclude)
}

// WithScope returns t narrowed to scope (a plan's, plan.Scope), as the
// flags that made it would have.
func (t Target) WithScope(scope string) Target {
	targets, exclude := plan.ScopeTerms(scope)
	t.Service, t.Component, t.Components, t.Exclude = "", "", "", strings.Join(exclude, ",")
	switch {
	case len(targets) == 1 && strings.Contains(targets[0], "/"):
		t.Service, t.Component = config.SplitAddress(targets[0])
	case len(targets) == 1:
		t.Service = targets[0]
	default:
		t.Components = strings.Join(targets, ",")
	}
	return t
}

// list splits a comma list; "" is none.
func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Validate checks the target's names (docs/configuration.md#names) before any backend is touched.
func (t Target) Validate() error {
	checks := []struct{ what, v string }{{"stack", t.Stack}, {"environment", t.Env}}
	if t.Service != "" || t.Component != "" {
		checks = append(checks, struct{ what, v string }{"service", t.Service})
	}
	if t.Component != "" {
		checks = append(checks, struct{ what, v string }{"component", t.Component})
	}
	for _, addr := range slices.Concat(list(t.Components), list(t.Exclude)) {
		svc, comp, isComp := strings.Cut(addr, "/")
		checks = append(checks, struct{ what, v string }{"service", svc})
		if isComp {
			checks = append(checks, struct{ what, v string }{"component", comp})
		}
	}
	for _, c := range checks {
		if err := config.ValidateName(c.what, c.v); err != nil {
			return err
		}
	}
	return nil
}

// CheckAgainst refuses, with a *TargetError that suggests the closest name,
// the services and components the target names (--service, --component,
// --exclude) that res does not have.
func (t Target) CheckAgainst(res *config.Resolved) error {
	services := map[string]bool{}
	var comps []string
	for addr, c := range res.Components {
		services[c.Service] = true
		comps = append(comps, addr)
	}
	slices.Sort(comps)
	known := slices.Sorted(maps.Keys(services))
	targets, exclude := t.Terms()
	for _, term := range targets {
		if err := checkTerm(res, term, known, comps, "--component (SERVICE/COMPONENT)", "--service"); err != nil {
			return err
		}
	}
	for _, term := range exclude {
		if err := checkTerm(res, term, known, comps, "--exclude", "--exclude"); err != nil {
			return err
		}
	}
	return nil
}

// checkTerm refuses a scope term (a service, or a component "svc/comp")
// that names nothing in res.
func checkTerm(res *config.Resolved, term string, services, comps []string, compFlag, svcFlag string) error {
	if strings.Contains(term, "/") {
		if _, ok := res.Components[term]; ok {
			return nil
		}
		return &TargetError{Msg: fmt.Sprintf("component %s is not in deployer.yaml%s: check %s", term, hint(term, comps), compFlag)}
	}
	if slices.Contains(services, term) {
		return nil
	}
	return &TargetError{Msg: fmt.Sprintf("service %q is not in deployer.yaml%s: check %s", term, hint(term, services), svcFlag)}
}

// hint is ` (did you mean "x"?)`, or the known names when none is close.
func hint(name string, known []string) string {
	if m := config.Suggest(name, known); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	if len(known) == 0 {
		return ""
	}
	if len(known) > 8 {
		known = append(known[:8:8], "...")
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

// TargetError: --service or --component names something deployer.yaml does
// not have. It is a usage error (exit 2, docs/exit-codes.md).
type TargetError struct{ Msg string }

func (e *TargetError) Error() string { return e.Msg }

// DeployerExitCode is 2: a target deployer.yaml does not have is a usage error
// (docs/exit-codes.md).
func (e *TargetError) DeployerExitCode() int { return exitcode.Usage }

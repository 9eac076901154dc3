// Package deploy is deployer's main use case (docs/design.md#the-main-job): lock -> load -> plan ->
// confirm -> apply -> save -> release, for deploy, destroy and import, and
// the use cases that share its planning: plan, plan --preview and
// --refresh, deploy --refresh-only; with a CI run's job (--run-id), its
// wait for the upstream stacks and the record of its failure.
//
// A use case takes ctx and its request struct (XRequest) and returns its
// result, as a method of Service. The Service stands on the use cases'
// core (internal/deploy/core: target, lease, load, save), which the state
// operations (internal/deploy/stateops) share; it hands the plan's steps
// to internal/executor and talks back to the user through one port, UI.
package deploy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Deps are the collaborators of Service, built by the CLI from
// deployer.yaml: the core's (backends, audit, clock, progress, environment,
// errored-state directory, observer, masker) and the deploy's own.
type Deps struct {
	core.Deps
	Engines []engine.Engine
	// ReplaceOn gives the config paths that force replacement per kind;
	// nil takes them from the engines' kind catalogs.
	ReplaceOn func(kind string) []string
	// UI shows the plan, asks for confirmation and hears each step start
	// and end (the live progress of a deploy, docs/command-kind.md#progress);
	// nil: NoUI.
	UI UI
	// Reporter hears each plan and apply once done (docs/design.md#reporting);
	// nil: NoReporter.
	Reporter Reporter
	// Version is the deployer version a saved plan binds (docs/plan.md
	// "Saved plans").
	Version string
}

// Service runs the deploy use cases on the core.
type Service struct {
	c *core.Core         // the backends, the lease, the state's load and save
	d Deps               // the deploy's own fields: Engines, ReplaceOn, UI, Version
	x *executor.Executor // applies the plans

	mu       sync.Mutex
	checked  bool // the engines' preflight passed
	checkErr error

	prepared map[prepareKey]*prepared // each target's config, resolved once

	// plansBuilt counts the plans built (buildPlan): a deploy builds one,
	// two when the state moved before its lease (docs/design.md#read-once-plan-once).
	plansBuilt atomic.Int64
}

// New returns a Service; zero fields of d take defaults.
func New(d Deps) *Service {
	if d.ReplaceOn == nil {
		d.ReplaceOn = replaceOn(d.Engines)
	}
	if d.UI == nil {
		d.UI = NoUI{}
	}
	if d.Reporter == nil {
		d.Reporter = NoReporter{}
	}
	c := core.New(d.Deps)
	s := &Service{c: c, d: d}
	s.x = &executor.Executor{Engines: d.Engines, Steps: d.UI, Learn: c.LearnOutputs}
	return s
}

// Core is the ground the Service stands on, which the state operations
// (internal/deploy/stateops) share.
func (s *Service) Core() *core.Core { return s.c }

// Target is what a command acts on (core.Target), as the requests of the
// use cases name it.
type Target = core.Target

// TargetError: the target names what deployer.yaml does not have
// (core.TargetError).
type TargetError = core.TargetError

// PlanRequest is one plan.
type PlanRequest struct {
	Config  *config.Config
	Target  Target
	Destroy bool
	// CheckEngines says Refresh or Preview follows (plan --refresh,
	// --preview): the engines' preflight runs first, before the state
	// backend is opened.
	CheckEngines bool
	// Save says the plan is saved (plan --out): its Binding is required,
	// so a plan that binds secret values when the state has no data key
	// yet fails without a secrets key (docs/plan.md "Saved plans");
	// otherwise such a plan has no Binding.
	Save bool
	// Policy checks the plan (docs/policy.md): its results are the plan's
	// Policy; a deny is not an error of Plan (the caller decides).
	Policy *PolicyCheck
	// Replace are components to replace though their config does not
	// force it (plan --replace ADDR; plan.Options.Replace).
	Replace []string
	// Refresh says Refresh follows (plan --refresh): the plan is reported
	// with its drift, by Refresh (Reporter.Planned).
	Refresh bool
	// Review is passed on to the Reporter with the plan.
	Review Review
}

// opName is input.deployment.operation: "destroy" for a destroy, else op.
func opName(destroy bool, op string) string {
	if destroy {
		return "destroy"
	}
	return op
}

// Plan builds the plan of the target against the stored state without
// locking (like `terraform plan -lock=false`; the deploy re-plans under its
// lock): the planning path of Apply (prepare, then planFor), stopped before
// the confirmation. The Reporter hears the plan (Planned), unless
// req.Refresh leaves that to Refresh.
func (s *Service) Plan(ctx context.Context, req PlanRequest) (*plan.Plan, error) {
	if err := req.Policy.load(ctx); err != nil {
		return nil, err
	}
	pr, err := s.prepare(ctx, req.Config, req.Target, req.CheckEngines)
	if err != nil {
		return nil, err
	}
	pr.replace = req.Replace
	pl, err := s.planFor(ctx, pr, req.Destroy, nil, req.Save)
	if err != nil {
		return nil, err
	}
	if err := plan.CheckProtected(pl.plan); err != nil {
		return nil, err
	}
	if err := s.checkPolicy(ctx, pl.plan, req.Policy, opName(req.Destroy, "plan"), pr.cfg.Dir); err != nil {
		if _, denied := err.(*policy.DeniedError); !denied {
			return nil, err
		}
	}
	if !req.Refresh {
		s.d.Reporter.Planned(ctx, Planned{Target: req.Target, Plan: pl.plan, Review: req.Review})
	}
	return pl.plan, nil
}

// buildPlan diffs res against st; read holds the outputs of data components
// read for this plan (readData).
func (s *Service) buildPlan(res *config.Resolved, st *statestore.State, head statestore.Head, t Target, destroy bool,
	read map[string]map[string]any, moves []plan.Move, replace []string) (*plan.Plan, error) {
	if !destroy {
		if err := refuseUndeployedDependencies(res, st, t); err != nil {
			return nil, err
		}
	}
	stored := st
	if head.Version == "" {
		stored = nil // no state yet: the plan is bound to no lineage
	}
	s.plansBuilt.Add(1)
	p, err := plan.Build(res, stored, plan.Options{ReplaceOn: s.d.ReplaceOn, Settings: kindSettings(s.d.Engines), Scope: t.Scope(), Destroy: destroy, Read: read, Moves: moves, Replace: replace})
	if err != nil {
		return nil, err
	}
	return p, s.x.MarkDeletedBy(p)
}

// refuseUndeployedDependencies refuses, with a *TargetError, a scoped plan
// of a component whose dependency outside the scope was never deployed: it
// would run with that dependency's inputs empty (docs/plan.md#scope).
func refuseUndeployedDependencies(res *config.Resolved, st *statestore.State, t Target) error {
	missing := plan.UndeployedDependencies(res, st, t.Scope())
	if len(missing) == 0 {
		return nil
	}
	var lines []string
	for _, addr := range slices.Sorted(maps.Keys(missing)) {
		lines = append(lines, fmt.Sprintf("%s depends on %s", addr, strings.Join(missing[addr], ", ")))
	}
	return &TargetError{Msg: fmt.Sprintf("%s, outside the target and not deployed yet: its inputs would be empty. "+
		"Deploy the dependencies first (--component %s), add them to the target, or deploy the whole stack",
		strings.Join(lines, "; "), strings.Join(slices.Sorted(maps.Keys(dependencySet(missing))), ","))}
}

// dependencySet is every dependency named in missing.
func dependencySet(missing map[string][]string) map[string]bool {
	set := map[string]bool{}
	for _, deps := range missing {
		for _, d := range deps {
			set[d] = true
		}
	}
	return set
}

// resolve applies the environment's overrides (references left as they
// are) and checks the scope.
func resolve(cfg *config.Config, t Target) (*config.Resolved, error) {
	res, err := cfg.Resolve(t.Env)
	if err != nil {
		return nil, err
	}
	res.Stack = t.Stack
	return res, checkScope(res, t)
}

// checkScope refuses --service/--component/--exclude names absent from
// the config with a *TargetError that suggests the closest name.
func checkScope(res *config.Resolved, t Target) error {
	services := map[string]bool{}
	var comps []string
	for addr := range res.Components {
		svc, _ := config.SplitAddress(addr)
		services[svc] = true
		comps = append(comps, addr)
	}
	slices.Sort(comps)
	known := slices.Sorted(maps.Keys(services))
	targets, exclude := plan.ScopeTerms(t.Scope())
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

package deploy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/statestore"
)

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
	if err := s.checkPolicy(ctx, pl.plan, req.Policy, "plan", pr.cfg.Dir); err != nil {
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

// planned is a plan with what it was made from.
type planned struct {
	plan *plan.Plan
	st   *statestore.State
	head statestore.Head
	// read holds the outputs of the data components read for the plan
	// (readData), which the engines then see.
	read map[string]map[string]any
}

// planFor is the one planning path of Plan and Apply: load the target's
// state (its checksums verified), read the data components, diff the
// resolved config against the state into a plan and bind it
// (docs/plan.md "Saved plans"). saved is the binding of the plan file a
// deploy --plan applies (nil plans afresh); requireBinding says the plan
// must have a binding (plan --out, deploy --plan).
func (s *Service) planFor(ctx context.Context, pr *prepared, destroy bool, saved *plan.Binding, requireBinding bool) (*planned, error) {
	ld, err := s.loadMoved(ctx, pr)
	if err != nil {
		return nil, err
	}
	return s.planFrom(ctx, pr, ld, destroy, saved, requireBinding)
}

// planFrom is planFor of a state already loaded.
func (s *Service) planFrom(ctx context.Context, pr *prepared, ld loaded, destroy bool, saved *plan.Binding, requireBinding bool) (*planned, error) {
	st, head, moves := ld.st, ld.head, ld.moves
	read, err := s.readData(ctx, pr.res, pr.t, destroy)
	if err != nil {
		return nil, err
	}
	p, err := s.buildPlan(pr.res, st, head, pr.t, destroy, read, moves, pr.replace)
	if err != nil {
		return nil, err
	}
	if err := s.rereadChanged(ctx, pr, p); err != nil {
		return nil, err
	}
	if p.Binding, err = s.bind(ctx, pr.res, st, pr.t, read, saved, requireBinding); err != nil {
		return nil, err
	}
	return &planned{plan: p, st: st, head: head, read: read}, nil
}

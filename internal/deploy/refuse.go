package deploy

import (
	"context"

	"github.com/deployer-dev/deployer/internal/plan"
)

// refuseBeforeLease checks, before any lock is taken or engine runs, what a
// deploy or destroy must not do (docs/commands.md#deployer-destroy): a destroy of
// components others outside its targets depend on (*plan.DependentsError;
// with req.WithDependents the target widens to them, and the prepared
// target returned is the wider one), and a plan that deletes or replaces
// a protected component (*plan.ProtectedError). It reads the state without
// a lock; planUnderLease checks again under it.
func (s *Service) refuseBeforeLease(ctx context.Context, pr *prepared, req *ApplyRequest) (*prepared, error) {
	st, head, moves, err := s.loadMoved(ctx, pr)
	if err != nil {
		return nil, err
	}
	if req.Destroy && pr.t.Scope() != "" {
		scope := pr.t.Scope()
		if req.WithDependents {
			scope = plan.WithDependents(pr.res, st, scope)
		}
		if deps := plan.DependentsOutside(pr.res, st, scope); len(deps) > 0 {
			return nil, &plan.DependentsError{Dependents: deps, Scope: scope}
		}
		if scope != pr.t.Scope() {
			req.Target = pr.t.WithScope(scope)
			if pr, err = s.prepare(ctx, req.Config, req.Target, !req.Policy.active()); err != nil {
				return nil, err
			}
		}
	}
	p, err := s.buildPlan(pr.res, st, head, pr.t, req.Destroy, nil, moves, pr.replace)
	if err != nil {
		return nil, err
	}
	return pr, plan.CheckProtected(p)
}

// refuseUnderLease checks the plan made under the lease as
// refuseBeforeLease checked the one before it: the state may have changed
// in between.
func refuseUnderLease(pl *planned, pr *prepared, destroy bool) error {
	if destroy {
		if deps := plan.DependentsOutside(pr.res, pl.st, pr.t.Scope()); len(deps) > 0 {
			return &plan.DependentsError{Dependents: deps, Scope: pr.t.Scope()}
		}
	}
	return plan.CheckProtected(pl.plan)
}

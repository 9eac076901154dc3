package deploy

import (
	"context"

	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// planBeforeLease plans the deploy or destroy of req against doc, the state
// read before any lock (nil: none yet), by the planning path of Plan
// (planFrom), and checks what a deploy or destroy must not do
// (docs/commands.md#deployer-destroy): a destroy of components others
// outside its targets depend on (*plan.DependentsError; with
// req.WithDependents the target widens to them, and the prepared target
// returned is the wider one), and a plan that deletes or replaces a
// protected component (*plan.ProtectedError). The plan is the one applied
// when the state has not moved by the time the lease is taken
// (planUnderLease); the policies check this same plan.
func (s *Service) planBeforeLease(ctx context.Context, pr *prepared, req *ApplyRequest, doc *statestore.Doc) (*planned, *prepared, error) {
	ld, err := s.loadMovedFrom(ctx, pr, doc)
	if err != nil {
		return nil, nil, err
	}
	if req.Destroy && pr.t.Scope() != "" {
		scope := pr.t.Scope()
		if req.WithDependents {
			scope = plan.WithDependents(pr.res, ld.st, scope)
		}
		if deps := plan.DependentsOutside(pr.res, ld.st, scope); len(deps) > 0 {
			return nil, nil, &plan.DependentsError{Dependents: deps, Scope: scope}
		}
		if scope != pr.t.Scope() {
			req.Target = pr.t.WithScope(scope)
			replace := pr.replace
			if pr, err = s.prepare(ctx, req.Config, req.Target, !req.Policy.active()); err != nil {
				return nil, nil, err
			}
			pr.replace = replace
			if ld, err = s.loadMovedFrom(ctx, pr, doc); err != nil {
				return nil, nil, err
			}
		}
	}
	pl, err := s.planFrom(ctx, pr, ld, req.Destroy, nil, false)
	if err != nil {
		return nil, nil, err
	}
	return pl, pr, plan.CheckProtected(pl.plan)
}

// refuseUnderLease checks a plan made again under the lease as
// planBeforeLease checked the one before it: the state may have changed
// in between.
func refuseUnderLease(pl *planned, pr *prepared, destroy bool) error {
	if destroy {
		if deps := plan.DependentsOutside(pr.res, pl.st, pr.t.Scope()); len(deps) > 0 {
			return &plan.DependentsError{Dependents: deps, Scope: pr.t.Scope()}
		}
	}
	return plan.CheckProtected(pl.plan)
}

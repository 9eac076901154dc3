package deploy

import (
	"context"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// prepared is a command's deployer.yaml resolved for its target, once per
// Service and target (docs/design.md#the-main-job): the environment's
// overrides applied, the scope checked, the ${env:...} and ${file:...}
// references resolved, and every secret in it taught to the Masker. Every
// phase after it is handed it; none resolves again.
type prepared struct {
	cfg *config.Config
	t   Target
	res *config.Resolved
	// secrets: the resolved config holds secret values, or a stack
	// output is one (Core.LearnSecrets), so the state needs a data key
	// (checkSecrets).
	secrets bool
	// replace are the components to replace on request (--replace).
	replace []string
}

type prepareKey struct {
	cfg *config.Config
	t   Target
}

// prepare resolves cfg for t; with checkEngines the engines' preflight
// runs on the components in scope first, before any reference is read or
// backend opened (a missing Pulumi CLI stops the command there); then the
// backends are opened. A later call for the same config and target
// returns what the first one resolved.
func (s *Service) prepare(ctx context.Context, cfg *config.Config, t Target, checkEngines bool) (*prepared, error) {
	key := prepareKey{cfg, t}
	s.mu.Lock()
	pr := s.prepared[key]
	s.mu.Unlock()
	if pr == nil {
		res, err := resolve(cfg, t)
		if err != nil {
			return nil, err
		}
		if checkEngines {
			if err := s.preflight(ctx, res, t); err != nil {
				return nil, err
			}
		}
		if err := config.ResolveReferences(cfg, res, s.c.Getenv); err != nil {
			return nil, err
		}
		pr = &prepared{cfg: cfg, t: t, res: res, secrets: s.c.LearnSecrets(res)}
		s.mu.Lock()
		if s.prepared == nil {
			s.prepared = map[prepareKey]*prepared{}
		}
		s.prepared[key] = pr
		s.mu.Unlock()
	} else if checkEngines {
		if err := s.preflight(ctx, pr.res, t); err != nil {
			return nil, err
		}
	}
	if err := s.c.Open(ctx); err != nil {
		return nil, err
	}
	return pr, nil
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

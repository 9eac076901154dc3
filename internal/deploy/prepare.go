package deploy

import (
	"context"

	"github.com/deployer-dev/deployer/internal/config"
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
	fresh := pr == nil
	if fresh {
		res, err := resolve(cfg, t)
		if err != nil {
			return nil, err
		}
		pr = &prepared{cfg: cfg, t: t, res: res}
	}
	if checkEngines {
		if err := s.preflight(ctx, pr.res, t); err != nil {
			return nil, err
		}
	}
	if fresh {
		if err := config.ResolveReferences(cfg, pr.res, s.c.Getenv); err != nil {
			return nil, err
		}
		pr.secrets = s.c.LearnSecrets(pr.res)
		s.mu.Lock()
		if s.prepared == nil {
			s.prepared = map[prepareKey]*prepared{}
		}
		s.prepared[key] = pr
		s.mu.Unlock()
	}
	if err := s.c.Open(ctx); err != nil {
		return nil, err
	}
	return pr, nil
}

// resolve applies the environment's overrides (references left as they
// are) and checks the scope.
func resolve(cfg *config.Config, t Target) (*config.Resolved, error) {
	res, err := cfg.Resolve(t.Env)
	if err != nil {
		return nil, err
	}
	res.Stack = t.Stack
	return res, t.CheckAgainst(res)
}

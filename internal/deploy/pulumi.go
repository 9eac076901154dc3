package deploy

import (
	"context"
	"errors"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/pulumiadapter"
)

// ErrNoPulumiComponents: plan --preview or --refresh on a scope without
// Pulumi kinds.
var ErrNoPulumiComponents = errors.New("no Pulumi components in scope: --preview and --refresh apply to kinds run by Pulumi (RDS, ElastiCacheRedis, MicroService, PulumiResource, StackReference)")

// ScopeKinds returns the kinds of the components of cfg in t's scope, for
// checks that must run before any backend is opened (the Pulumi CLI).
func ScopeKinds(cfg *config.Config, t Target) ([]string, error) {
	res, err := resolve(cfg, t)
	if err != nil {
		return nil, err
	}
	return scopeKinds(res, t), nil
}

// pulumiSteps returns the Pulumi engine and the plan's steps it handles.
func (s *Service) pulumiSteps(p *plan.Plan) (*pulumiadapter.Engine, []plan.Step, error) {
	var eng *pulumiadapter.Engine
	for _, e := range s.d.Engines {
		if pe, ok := e.(*pulumiadapter.Engine); ok {
			eng = pe
		}
	}
	var steps []plan.Step
	for _, st := range p.Steps {
		if pulumiadapter.IsPulumiKind(st.Kind) && st.Action != plan.NoOp {
			steps = append(steps, st)
		}
	}
	if eng == nil || len(steps) == 0 && !hasPulumi(p) {
		return nil, nil, ErrNoPulumiComponents
	}
	return eng, steps, nil
}

func hasPulumi(p *plan.Plan) bool {
	for _, st := range p.Steps {
		if pulumiadapter.IsPulumiKind(st.Kind) {
			return true
		}
	}
	return false
}

// Preview adds Pulumi's resource-level preview to plan p (plan --preview).
func (s *Service) Preview(ctx context.Context, cfg *config.Config, t Target, p *plan.Plan) (string, error) {
	eng, steps, err := s.pulumiSteps(p)
	if err != nil {
		return "", err
	}
	st, _, err := s.loadOrNew(ctx, t)
	if err != nil {
		return "", err
	}
	res, err := s.resolve(cfg, t)
	if err != nil {
		return "", err
	}
	in := engine.Inputs{Stack: t.Stack, Env: t.Env, Dir: cfg.Dir, EnvConfig: res.EnvConfig, DeploymentID: NewDeploymentID(),
		Outputs: outputsOf(st), Keep: keepFor(p, st, eng, steps), Progress: s.d.Masker.Writer(s.d.Progress)}
	return eng.Preview(ctx, steps, in)
}

// Refresh reports drift between the state's actual_state and the cloud for
// the Pulumi components in scope (plan --refresh). Pulumi's own state is
// refreshed; deployer's is not written.
func (s *Service) Refresh(ctx context.Context, cfg *config.Config, t Target, p *plan.Plan) ([]pulumiadapter.Drift, error) {
	eng, _, err := s.pulumiSteps(p)
	if err != nil {
		return nil, err
	}
	st, _, err := s.loadOrNew(ctx, t)
	if err != nil {
		return nil, err
	}
	res, err := s.resolve(cfg, t)
	if err != nil {
		return nil, err
	}
	var all []plan.Step
	for _, step := range p.Steps {
		if pulumiadapter.IsPulumiKind(step.Kind) && step.Prior != nil {
			all = append(all, step)
		}
	}
	in := engine.Inputs{Stack: t.Stack, Env: t.Env, Dir: cfg.Dir, EnvConfig: res.EnvConfig, DeploymentID: NewDeploymentID(),
		Outputs: outputsOf(st), Keep: keepFor(p, st, eng, all), Progress: s.d.Masker.Writer(s.d.Progress)}
	return eng.Refresh(ctx, all, in)
}

package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// ErrNothingToPreview: plan --preview on a scope where the engines' Preview
// covers no component (engine.Kind.Preview). The error Preview returns
// wraps it and names the components that are covered (nothingTo).
var ErrNothingToPreview = errors.New("nothing in scope can be previewed")

// ErrNothingToRefresh: plan --refresh on a scope where the engines' Refresh
// covers no component with state (engine.Kind.Refresh). The error Refresh
// returns wraps it, names the components that are covered and says to
// deploy first (nothingTo).
var ErrNothingToRefresh = errors.New("nothing in scope can be refreshed")

// nothingTo returns none wrapped with which components flag applies to,
// as the catalogs of engines declare it (cover picks engine.Kind.Preview
// or Refresh), then after: "nothing in scope can be refreshed: --refresh
// applies to Command components with command.read (docs/...) and to RDS or
// MicroService components". Kinds covered alike are named together, in the
// order of engines.
func nothingTo(none error, flag string, engines []engine.Engine, cover func(engine.Kind) engine.Coverage, after string) error {
	var whens []string
	kinds := map[string][]string{}
	for _, e := range engines {
		for _, k := range e.Kinds() {
			c := cover(k)
			if !c.Covered {
				continue
			}
			if _, ok := kinds[c.When]; !ok {
				whens = append(whens, c.When)
			}
			kinds[c.When] = append(kinds[c.When], k.Name)
		}
	}
	if len(whens) == 0 {
		return fmt.Errorf("%w: no engine in use supports %s", none, flag)
	}
	to := make([]string, len(whens))
	for i, w := range whens {
		to[i] = "to " + orList(kinds[w]) + " components"
		if w != "" {
			to[i] += " " + w
		}
	}
	return fmt.Errorf("%w: %s applies %s%s", none, flag, andList(to), after)
}

// orList is "a", "a or b", "a, b or c".
func orList(s []string) string { return joinLast(s, " or ") }

// andList is "a", "a and b", "a, b and c".
func andList(s []string) string { return joinLast(s, " and ") }

func joinLast(s []string, last string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + last + s[len(s)-1]
}

// preflight runs, once per Service, every engine's preflight
// (engine.Engine.Preflight) on the components of cfg in t's scope, in the
// order of Deps.Engines, before any backend is opened or lock taken: a
// missing Pulumi CLI or provider plugin stops the use case there, touching
// neither lock nor state (docs/pulumi.md, "Before the lock"). A failure is
// returned again on the next call.
func (s *Service) preflight(ctx context.Context, res *config.Resolved, t Target) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.checked {
		s.checked = true
		s.checkErr = preflight(ctx, res, t, s.d.Engines)
	}
	return s.checkErr
}

func preflight(ctx context.Context, res *config.Resolved, t Target, engines []engine.Engine) error {
	scope := t.Scope()
	for _, e := range engines {
		var comps []plan.Step
		for _, addr := range slices.Sorted(maps.Keys(res.Components)) {
			c := res.Components[addr]
			if plan.InScope(addr, scope) && e.Handles(c.Kind) {
				comps = append(comps, plan.Step{Address: addr, Service: c.Service, Component: c.Name, Kind: c.Kind,
					Config: c.Config, DependsOn: c.DependsOn})
			}
		}
		if len(comps) == 0 {
			continue
		}
		if err := e.Preflight(ctx, engine.PreflightRequest{Components: comps}); err != nil {
			return err
		}
	}
	return nil
}

// KindsOf returns the kind catalog of engines, by name (engine.Engine.Kinds).
func KindsOf(engines []engine.Engine) map[string]engine.Kind {
	out := map[string]engine.Kind{}
	for _, e := range engines {
		for _, k := range e.Kinds() {
			out[k.Name] = k
		}
	}
	return out
}

// replaceOn is plan.Options.ReplaceOn from the engines' catalogs.
func replaceOn(engines []engine.Engine) func(kind string) []string {
	kinds := KindsOf(engines)
	return func(kind string) []string { return slices.Clone(kinds[kind].ReplaceOn) }
}

// kindSettings is plan.Options.Settings from the engines' catalogs.
func kindSettings(engines []engine.Engine) func(kind string) plan.KindSettings {
	kinds := KindsOf(engines)
	return func(kind string) plan.KindSettings { return kinds[kind].Settings }
}

// stackOutputs reads the outputs of another stack/environment from the
// state store, read-only and without a lock, for StackReference components
// (engine.Inputs.StackOutputs).
func (s *Service) stackOutputs(ctx context.Context, stack, env string) (engine.StackView, error) {
	st, _, err := s.c.Store.Load(ctx, stack, env)
	if errors.Is(err, statestore.ErrNotFound) {
		return engine.StackView{}, fmt.Errorf("it has no state (nothing at %s): deploy it first", s.c.Store.Location(stack, env))
	}
	if err != nil {
		return engine.StackView{}, err
	}
	if neverDeployed(st) {
		return engine.StackView{}, fmt.Errorf("nothing was deployed to it yet (its state at %s records only failed deployments): deploy it first", s.c.Store.Location(stack, env))
	}
	return engine.StackView{Components: outputsOf(st), Outputs: maps.Clone(st.Outputs)}, nil
}

// neverDeployed reports whether st has no resources and no successful
// deployment: a state that only records the failures of a run's jobs
// (RecordRunFailure), read as no state at all.
func neverDeployed(st *statestore.State) bool {
	if len(st.Resources) > 0 {
		return false
	}
	for _, d := range st.DeploymentHistory {
		if d.Status == statestore.DeploymentSuccess {
			return false
		}
	}
	return true
}

// readData reads, without a lock and changing nothing, the outputs of the
// data components in t's scope (engine.Kind.Read: StackReference), by
// address, for plan.Options.Read; nil for a destroy, which reads nothing.
// Each referenced stack/environment is read once. Errors are Read's: they
// name the component and the stack it references.
func (s *Service) readData(ctx context.Context, res *config.Resolved, t Target, destroy bool) (map[string]map[string]any, error) {
	if destroy {
		return nil, nil
	}
	kinds := KindsOf(s.d.Engines)
	seen := map[string]engine.StackView{}
	in := engine.Inputs{Stack: t.Stack, Env: t.Env, EnvConfig: res.EnvConfig,
		StackOutputs: func(ctx context.Context, stack, env string) (engine.StackView, error) {
			if o, ok := seen[stack+"/"+env]; ok {
				return o, nil
			}
			o, err := s.stackOutputs(ctx, stack, env)
			if err == nil {
				seen[stack+"/"+env] = o
			}
			return o, err
		}}
	var out map[string]map[string]any
	scope := t.Scope()
	for _, addr := range res.Addresses() {
		c := res.Components[addr]
		k := kinds[c.Kind]
		if k.Read == nil || !plan.InScope(addr, scope) {
			continue
		}
		outs, err := k.Read(ctx, plan.Step{Address: addr, Service: c.Service, Component: c.Name, Kind: c.Kind, Config: c.Config}, in)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]map[string]any{}
		}
		out[addr] = outs
	}
	return out, nil
}

// withRead returns outputs with the outputs read for the plan in place of
// the state's, for the engines: dependents see what the plan showed.
func withRead(outputs, read map[string]map[string]any) map[string]map[string]any {
	for addr, o := range read {
		outputs[addr] = maps.Clone(o)
	}
	return outputs
}

// inputs are the engines' Inputs of a preview or refresh of pr, and the
// state they come from.
func (s *Service) inputs(ctx context.Context, pr *prepared) (engine.Inputs, *statestore.State, error) {
	t := pr.t
	st, _, err := s.c.LoadOrNew(ctx, t)
	if err != nil {
		return engine.Inputs{}, nil, err
	}
	read, err := s.readData(ctx, pr.res, t, false)
	if err != nil {
		return engine.Inputs{}, nil, err
	}
	return engine.Inputs{Stack: t.Stack, Env: t.Env, Dir: pr.cfg.Dir, EnvConfig: pr.res.EnvConfig, DeploymentID: core.NewDeploymentID(),
		Outputs: withRead(outputsOf(st), read), Progress: s.c.Masker.Writer(s.c.Progress), StackOutputs: s.stackOutputs, Learn: s.c.LearnOutputs}, st, nil
}

// PreviewRequest asks for the engines' previews of a plan (plan --preview).
type PreviewRequest struct {
	Config *config.Config
	Target Target
	Plan   *plan.Plan // made by Plan for Config and Target
}

// Preview adds the engines' own previews to plan req.Plan (plan --preview), in
// the order of Deps.Engines, each under its own heading, a blank line
// between them. An error wrapping ErrNothingToPreview, naming
// the components that preview, when no engine previews anything in scope.
func (s *Service) Preview(ctx context.Context, req PreviewRequest) (string, error) {
	p := req.Plan
	pr, err := s.prepare(ctx, req.Config, req.Target, true)
	if err != nil {
		return "", err
	}
	var out string
	none := nothingTo(ErrNothingToPreview, "--preview", s.d.Engines, func(k engine.Kind) engine.Coverage { return k.Preview }, "")
	err = s.eachEngine(ctx, pr, p, none, func(r executor.EngineRun, in engine.Inputs, st *statestore.State) error {
		in.Keep = executor.Keep(p, st, r.Engine, r.Changes)
		resp, err := r.Engine.Preview(ctx, engine.PreviewRequest{Steps: r.Changes, Inputs: in})
		if err != nil {
			return err
		}
		if out != "" {
			out += "\n"
		}
		out += resp.Text
		return nil
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

// RefreshRequest asks for the drift of the components of a plan (plan
// --refresh).
type RefreshRequest struct {
	Config *config.Config
	Target Target
	Plan   *plan.Plan // made by Plan for Config and Target
	// Review is passed on to the Reporter with the plan and its drift.
	Review Review
}

// Refresh reports drift between the state's actual_state and the cloud for
// the components in scope whose engine refreshes (plan --refresh). The
// engines' own state is refreshed; deployer's is not written. Secret values
// in the drift are masked (docs/plan.md#secrets). An error wrapping
// ErrNothingToRefresh, naming the components that refresh, when no engine
// refreshes anything in scope. The Reporter hears the plan with its drift
// (Planned).
func (s *Service) Refresh(ctx context.Context, req RefreshRequest) ([]engine.Drift, error) {
	pr, err := s.prepare(ctx, req.Config, req.Target, true)
	if err != nil {
		return nil, err
	}
	out, _, err := s.readLive(ctx, pr, req.Plan)
	if err != nil {
		return nil, err
	}
	maskDrift(out)
	s.d.Reporter.Planned(ctx, Planned{Target: req.Target, Plan: req.Plan, Refreshed: true, Drift: out, Review: req.Review})
	return out, nil
}

// readLive runs the engines' Refresh on the components of p that have
// state and returns the drift, unmasked, and the addresses the engines
// read (engine.RefreshResponse.Read). An error wrapping
// ErrNothingToRefresh when no engine reads anything in scope.
func (s *Service) readLive(ctx context.Context, pr *prepared, p *plan.Plan) ([]engine.Drift, map[string]bool, error) {
	var out []engine.Drift
	read := map[string]bool{}
	none := nothingTo(ErrNothingToRefresh, "--refresh", s.d.Engines, func(k engine.Kind) engine.Coverage { return k.Refresh },
		"; deploy first if the components have no state yet")
	err := s.eachEngine(ctx, pr, p, none, func(r executor.EngineRun, in engine.Inputs, st *statestore.State) error {
		in.Keep = executor.Keep(p, st, r.Engine, r.Prior)
		resp, err := r.Engine.Refresh(ctx, engine.RefreshRequest{Steps: r.Prior, Inputs: in})
		if err == nil {
			out = append(out, resp.Drift...)
			for _, a := range resp.Read {
				read[a] = true
			}
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return out, read, nil
}

// eachEngine calls call for each engine run of p, in order, with the run's
// inputs and the state they come from. A call that returns
// engine.ErrNotSupported skips its engine; another error stops the walk and
// is returned. none when no engine supported the operation.
func (s *Service) eachEngine(ctx context.Context, pr *prepared, p *plan.Plan, none error,
	call func(r executor.EngineRun, in engine.Inputs, st *statestore.State) error) error {
	in, st, err := s.inputs(ctx, pr)
	if err != nil {
		return err
	}
	supported := false
	for _, r := range s.x.ByEngine(p) {
		err := call(r, in, st)
		if errors.Is(err, engine.ErrNotSupported) {
			continue
		}
		if err != nil {
			return err
		}
		supported = true
	}
	if !supported {
		return none
	}
	return nil
}

// maskDrift masks, in place, the secret values of drift: values marked
// secret anywhere, and both sides of a field whose key names a secret.
func maskDrift(drift []engine.Drift) {
	for i := range drift {
		d := &drift[i]
		d.ActualState, _ = plan.Mask(d.ActualState).(map[string]any)
		for j := range d.Fields {
			fd := &d.Fields[j]
			fd.Old, fd.New = plan.Mask(fd.Old), plan.Mask(fd.New)
			if key := fd.Path[strings.LastIndex(fd.Path, ".")+1:]; plan.IsSecretKey(key) {
				fd.Old, fd.New, fd.Sensitive = plan.Masked, plan.Masked, true
			}
		}
	}
}

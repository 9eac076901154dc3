// Package stackref is the engine of the StackReference kind: a component
// whose outputs are another deployer stack's outputs, read from deployer's
// own state (docs/kinds.md#stackreference--another-deployer-stacks-outputs).
// It needs no tool: a stack of Command components references another stack without the Pulumi CLI. Its
// kind is a data source (engine.Kind.Read): plans read the referenced
// outputs, and an apply records what its plan read.
package stackref

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// Kind is the component kind this engine applies.
const Kind = "StackReference"

// Engine applies StackReference components. The zero value is ready to use.
type Engine struct{}

var _ engine.Engine = (*Engine)(nil)

// New returns the StackReference engine.
func New() *Engine { return &Engine{} }

// Name is "stackref".
func (*Engine) Name() string { return "stackref" }

// Kinds is the one kind StackReference: replaced when stack or environment
// changes, read by Read.
func (*Engine) Kinds() []engine.Kind { return Catalog() }

// Catalog is the kind catalog of every StackReference engine
// (Engine.Kinds), read without building one.
func Catalog() []engine.Kind {
	return []engine.Kind{{Name: Kind, ReplaceOn: []string{"stack", "environment"}, Read: Read}}
}

// Handles reports whether kind is StackReference.
func (*Engine) Handles(kind string) bool { return kind == Kind }

// Capabilities: each step is its own call (nothing runs; no batching).
func (*Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{ConcurrentSteps: true}
}

// Preflight checks each component's config: stack is a stack name and
// environment, when set, an environment name.
func (*Engine) Preflight(_ context.Context, req engine.PreflightRequest) error {
	for _, c := range req.Components {
		if _, _, err := target(c, "dev"); err != nil {
			return err
		}
	}
	return nil
}

// Preview is not supported: there is nothing to preview.
func (*Engine) Preview(context.Context, engine.PreviewRequest) (engine.PreviewResponse, error) {
	return engine.PreviewResponse{}, engine.ErrNotSupported
}

// Refresh is not supported: a reference has no actual state.
func (*Engine) Refresh(context.Context, engine.RefreshRequest) (engine.RefreshResponse, error) {
	return engine.RefreshResponse{}, engine.ErrNotSupported
}

// Kill does nothing: no process runs.
func (*Engine) Kill() {}

// Apply records, for each create, update or replace step of req.Steps,
// the outputs its plan read (req.Outputs[address], put there by the
// deploy from the plan);
// when the plan read none (a caller that did not read) it reads them now.
// A delete forgets the component. Results are ready or deleted; the first
// read error fails its step and stops.
func (e *Engine) Apply(ctx context.Context, req engine.ApplyRequest) (engine.ApplyResponse, error) {
	var out []engine.Result
	in := req.Inputs
	for _, st := range req.Steps {
		r := engine.Result{Address: st.Address, Action: st.Action, Started: timeNow()}
		switch st.Action {
		case plan.NoOp:
			if st.MovedFrom != "" {
				out = append(out, engine.Moved(st, in.Outputs, nil, timeNow()))
			}
			continue
		case plan.Delete:
			r.Status = engine.StatusDeleted
			if in.Outputs != nil {
				delete(in.Outputs, st.Address)
			}
		default:
			outs, ok := in.Outputs[st.Address]
			if !ok {
				var err error
				if outs, err = Read(ctx, st, in); err != nil {
					r.Status, r.Err, r.Finished = engine.StatusFailed, err, timeNow()
					return engine.ApplyResponse{Results: append(out, r)}, err
				}
			}
			r.Status, r.Outputs = engine.StatusReady, maps.Clone(outs)
			if in.Outputs != nil {
				in.Outputs[st.Address] = maps.Clone(outs)
			}
		}
		r.Finished = timeNow()
		out = append(out, r)
	}
	return engine.ApplyResponse{Results: out}, nil
}

// Destroy forgets every component of req.Steps: a reference holds nothing.
func (e *Engine) Destroy(ctx context.Context, req engine.DestroyRequest) (engine.DestroyResponse, error) {
	del := make([]plan.Step, len(req.Steps))
	for i, st := range req.Steps {
		st.Action = plan.Delete
		del[i] = st
	}
	resp, err := e.Apply(ctx, engine.ApplyRequest{Steps: del, Inputs: req.Inputs})
	return engine.DestroyResponse(resp), err
}

// Read returns the outputs of the stack/environment c references
// (config.stack, config.environment, default in.Env), from deployer's state
// through in.StackOutputs: {stack: "organization/{stack}/{env}", outputs:
// {address: outputs}}, and stack_outputs: {name: value}, the stack's own
// outputs (docs/operations.md#stack-outputs), when it names any (left out
// otherwise, so references recorded before stack outputs existed read the
// same). Secret outputs keep their {secret: true, value: X} marker. Errors:
// a bad config, a reference to the stack itself, a referenced stack with no
// state or no components (both name it and say to deploy it first), or the
// state's own read error.
func Read(ctx context.Context, c plan.Step, in engine.Inputs) (map[string]any, error) {
	stack, env, err := target(c, in.Env)
	if err != nil {
		return nil, err
	}
	if stack == in.Stack && env == in.Env {
		return nil, fmt.Errorf("%s: a stack cannot reference itself (%s/%s); use ${service/component.output} references instead", c.Address, stack, env)
	}
	if in.StackOutputs == nil {
		return nil, fmt.Errorf("%s: this run cannot read other stacks' state", c.Address)
	}
	view, err := in.StackOutputs(ctx, stack, env)
	if err != nil {
		return nil, fmt.Errorf("%s: StackReference to stack %s environment %s: %w", c.Address, stack, env, err)
	}
	if len(view.Components) == 0 {
		return nil, fmt.Errorf("%s: StackReference to stack %s environment %s: that stack has no components in its state (destroyed, or never deployed): deploy it first, or remove the reference",
			c.Address, stack, env)
	}
	flat := make(map[string]any, len(view.Components))
	for addr, o := range view.Components {
		if o == nil {
			o = map[string]any{}
		}
		flat[addr] = o
	}
	out := map[string]any{"stack": Name(stack, env), "outputs": flat}
	if len(view.Outputs) > 0 {
		out["stack_outputs"] = maps.Clone(view.Outputs)
	}
	return out, nil
}

// Name is the referenced stack's name in the component's outputs,
// "organization/{stack}/{env}": the name Pulumi's DIY backends give the
// stack (kept so outputs recorded before this engine existed still match).
func Name(stack, env string) string { return "organization/" + stack + "/" + env }

// target returns the referenced stack and environment of c, checked as names.
func target(c plan.Step, defaultEnv string) (stack, env string, err error) {
	stack, _ = c.Config["stack"].(string)
	if stack == "" {
		return "", "", fmt.Errorf("%s: config stack is required (the deployer stack whose outputs to read)", c.Address)
	}
	if err := config.ValidateName("stack", stack); err != nil {
		return "", "", fmt.Errorf("%s: config stack: %w", c.Address, err)
	}
	env = defaultEnv
	if v, ok := c.Config["environment"]; ok && v != nil {
		if env, _ = v.(string); env == "" {
			return "", "", fmt.Errorf("%s: config environment must be an environment name", c.Address)
		}
		if err := config.ValidateName("environment", env); err != nil {
			return "", "", fmt.Errorf("%s: config environment: %w", c.Address, err)
		}
	}
	return stack, env, nil
}

// timeNow stamps results (a variable for tests).
var timeNow = time.Now

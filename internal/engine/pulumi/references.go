package pulumi

import (
	"context"
	"fmt"

	"github.com/deployer-dev/deployer/internal/engine"
)

// references are the outputs of the stacks StackReference components read,
// by "stack/env", then by component address.
type references map[string]map[string]map[string]any

// readReferences reads, from deployer's state (in.StackOutputs), the
// outputs of every stack/environment a StackReference of comps names. Each
// deployer stack keeps its own Pulumi backend, so Pulumi's own
// pulumi:pulumi:StackReference could not see another stack; deployer's state
// holds the same outputs (docs/pulumi.md, "Stack references").
func readReferences(ctx context.Context, in engine.Inputs, comps []Component) (references, error) {
	refs := references{}
	for _, c := range comps {
		if c.Kind != "StackReference" {
			continue
		}
		stack, env := str(c.Config, "stack", ""), str(c.Config, "environment", in.Env)
		if stack == "" {
			return nil, fmt.Errorf("%s: config stack is required (the deployer stack whose outputs to read)", c.Address)
		}
		if stack == in.Stack && env == in.Env {
			return nil, fmt.Errorf("%s: a stack cannot reference itself (%s/%s); use ${service/component.output} references instead", c.Address, stack, env)
		}
		key := stack + "/" + env
		if _, ok := refs[key]; ok {
			continue
		}
		if in.StackOutputs == nil {
			return nil, fmt.Errorf("%s: this run cannot read other stacks' state", c.Address)
		}
		outs, err := in.StackOutputs(ctx, stack, env)
		if err != nil {
			return nil, fmt.Errorf("%s: read the outputs of stack %s environment %s (deploy it first): %w", c.Address, stack, env, err)
		}
		refs[key] = outs
	}
	return refs, nil
}

// knownOutputs returns, by address, the outputs of the StackReference
// components of comps as read before the run: what state records for them,
// with each secret still marked (Pulumi would record them as one secret).
func knownOutputs(comps []Component, refs references, env string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, c := range comps {
		if c.Kind != "StackReference" {
			continue
		}
		stack, e := str(c.Config, "stack", ""), str(c.Config, "environment", env)
		outs := map[string]any{}
		for addr, o := range refs[stack+"/"+e] {
			outs[addr] = o
		}
		out[c.Address] = map[string]any{"stack": StackReferenceName(stack, e), "outputs": outs}
	}
	return out
}

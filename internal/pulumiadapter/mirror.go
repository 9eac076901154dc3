package pulumiadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"

	"github.com/deployer-dev/deployer/internal/engine"
)

// mirrorReferences makes the stacks named by StackReference components
// readable from this stack's Pulumi backend. Pulumi resolves
// pulumi:pulumi:StackReference in the backend of the referring stack, and
// every deployer stack/env has its own backend (stacks/{stack}/{env}/pulumi),
// so before each run the engine copies the referenced stack's root resource
// (its outputs, still encrypted by its secrets provider, and that provider's
// state) into this backend as stack "organization/{stack}/{env}"
// (docs/pulumi.md, "Stack references").
func (e *Engine) mirrorReferences(ctx context.Context, st auto.Stack, in engine.Inputs, comps []Component) error {
	for _, c := range comps {
		if c.Kind != "StackReference" {
			continue
		}
		refStack, refEnv := str(c.Config, "stack", ""), str(c.Config, "environment", in.Env)
		if refStack == "" {
			return fmt.Errorf("%s: config stack is required (the deployer stack whose outputs to read)", c.Address)
		}
		if refStack == in.Stack {
			return fmt.Errorf("%s: a stack cannot reference itself (%s); use ${service/component.output} references instead", c.Address, refStack)
		}
		src := BackendFor(e.opts.BackendURL, refStack, refEnv)
		ws, err := auto.NewLocalWorkspace(ctx,
			auto.Project(workspace.Project{Name: tokens.PackageName(refStack), Runtime: workspace.NewProjectRuntimeInfo("go", nil),
				Backend: &workspace.ProjectBackend{URL: src}}),
			auto.EnvVars(st.Workspace().GetEnvVars()), auto.Pulumi(st.Workspace().PulumiCommand()))
		if err != nil {
			return fmt.Errorf("%s: open the Pulumi backend of %s/%s: %w", c.Address, refStack, refEnv, err)
		}
		dep, err := ws.ExportStack(ctx, refEnv)
		if err != nil {
			return fmt.Errorf("%s: read the outputs of stack %s/%s (deploy it first): %w", c.Address, refStack, refEnv, err)
		}
		mirror, err := rootOnly(dep)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Address, err)
		}
		name := StackReferenceName(refStack, refEnv)
		here := st.Workspace()
		if err := here.CreateStack(ctx, name); err != nil && !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("%s: create the mirror of %s: %w", c.Address, name, err)
		}
		if err := here.ImportStack(ctx, name, mirror); err != nil {
			return fmt.Errorf("%s: import the outputs of %s: %w", c.Address, name, err)
		}
		if err := here.SelectStack(ctx, st.Name()); err != nil {
			return fmt.Errorf("%s: select stack %s again: %w", c.Address, st.Name(), err)
		}
	}
	return nil
}

// rootOnly keeps, of an exported deployment, the manifest, the secrets
// provider state and the root pulumi:pulumi:Stack resource (its outputs).
func rootOnly(dep apitype.UntypedDeployment) (apitype.UntypedDeployment, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal(dep.Deployment, &d); err != nil {
		return dep, fmt.Errorf("read exported deployment: %w", err)
	}
	var resources []map[string]any
	if raw, ok := d["resources"]; ok {
		if err := json.Unmarshal(raw, &resources); err != nil {
			return dep, fmt.Errorf("read exported resources: %w", err)
		}
	}
	var root []map[string]any
	for _, r := range resources {
		if r["type"] == "pulumi:pulumi:Stack" {
			root = append(root, r)
		}
	}
	out := map[string]any{"resources": root}
	for _, k := range []string{"manifest", "secrets_providers", "metadata"} {
		if raw, ok := d[k]; ok {
			out[k] = raw
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return dep, fmt.Errorf("encode mirrored deployment: %w", err)
	}
	return apitype.UntypedDeployment{Version: dep.Version, Deployment: b}, nil
}

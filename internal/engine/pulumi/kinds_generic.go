package pulumi

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/deployer-dev/deployer/internal/plan"
)

// DIYOrganization is the organization name of every stack in a DIY
// (file:// or s3://) Pulumi backend.
const DIYOrganization = "organization"

func init() {
	register(&Kind{
		Name:      "PulumiResource",
		Tokens:    []string{"(config type)"},
		ReplaceOn: []string{"type"},
		Register:  registerPulumiResource,
	})
	register(&Kind{
		Name:      "StackReference",
		ReplaceOn: []string{"stack", "environment"},
		DataOnly:  true,
		Register:  registerStackReference,
	})
}

// tokenRE matches a Pulumi type token "package:module:Type".
var tokenRE = regexp.MustCompile(`^[a-zA-Z][\w-]*:[\w/.-]*:[A-Za-z][\w]*$`)

// refRE matches a whole-string reference "${service/component.key.sub}".
var refRE = regexp.MustCompile(`^\$\{([a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*)((?:\.[^.}]+)+)\}$`)

func registerPulumiResource(r *Registration) (*Registered, error) {
	token := str(r.Config, "type", "")
	if !tokenRE.MatchString(token) || strings.HasPrefix(token, "pulumi:providers:") {
		return nil, fmt.Errorf("%s: config type %q is not a resource type token (package:module:Type, e.g. random:index/randomPet:RandomPet)", r.Address, token)
	}
	props := pulumi.Map{}
	if raw := get(r.Config, "properties"); raw != nil {
		m, ok := asMap(raw)
		if !ok {
			return nil, fmt.Errorf("%s: config properties must be a map of input properties", r.Address)
		}
		for _, k := range keys(m) {
			in, err := resolve(r, "properties."+k, m[k])
			if err != nil {
				return nil, err
			}
			if in != nil {
				props[k] = in
			}
		}
	}
	var opts []pulumi.ResourceOption
	if v := str(r.Config, "version", ""); v != "" {
		opts = append(opts, pulumi.Version(v))
	}
	res, err := r.child(token, r.Name, props, opts...)
	if err != nil {
		return nil, err
	}
	return &Registered{
		Outputs:  pulumi.Map{"id": res.ID(), "properties": res.Props},
		Children: map[string]*Child{"resource": res},
		Primary:  "resource",
	}, nil
}

// resolve converts a config value to an input, replacing whole-string
// references "${service/component.key}" with the referenced output.
func resolve(r *Registration, path string, v any) (pulumi.Input, error) {
	if plan.IsSecretValue(v) {
		in, err := resolve(r, path, v.(map[string]any)["value"])
		if err != nil || in == nil {
			return in, err
		}
		return pulumi.ToSecret(in), nil
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if !strings.HasPrefix(t, "${") {
			return pulumi.String(t), nil
		}
		if r.Ref == nil || !refRE.MatchString(t) {
			return nil, fmt.Errorf("%s: config %s: %q is not a reference of the form ${service/component.output}", r.Address, path, t)
		}
		in, ok, err := r.Ref(t)
		if err != nil {
			return nil, fmt.Errorf("%s: config %s: %w", r.Address, path, err)
		}
		if !ok {
			return nil, fmt.Errorf("%s: config %s: %s names no component of this stack with outputs; add it to depends_on", r.Address, path, t)
		}
		return in, nil
	case []any:
		a := make(pulumi.Array, 0, len(t))
		for i, e := range t {
			in, err := resolve(r, fmt.Sprintf("%s[%d]", path, i), e)
			if err != nil {
				return nil, err
			}
			a = append(a, in)
		}
		return a, nil
	}
	if m, ok := asMap(v); ok {
		out := pulumi.Map{}
		for _, k := range keys(m) {
			in, err := resolve(r, path+"."+k, m[k])
			if err != nil {
				return nil, err
			}
			if in != nil {
				out[k] = in
			}
		}
		return out, nil
	}
	return toInput(v), nil
}

// StackReferenceName is the fully qualified name of the Pulumi stack of a
// deployer stack/environment in a DIY backend: "organization/{stack}/{env}"
// (project = deployer stack, Pulumi stack = environment; docs/pulumi.md#stack-references).
func StackReferenceName(stack, env string) string {
	return DIYOrganization + "/" + stack + "/" + env
}

// registerStackReference gives the component the outputs of another
// deployer stack/environment, read from deployer's state before the run
// (readReferences), as {stack: "organization/{stack}/{env}", outputs:
// {address: outputs}}. Secret outputs stay secret (pulumi.ToSecret).
func registerStackReference(r *Registration) (*Registered, error) {
	stack := str(r.Config, "stack", "")
	if stack == "" {
		return nil, fmt.Errorf("%s: config stack is required (the deployer stack whose outputs to read)", r.Address)
	}
	env := str(r.Config, "environment", r.Ctx.Stack())
	outs, ok := r.References[stack+"/"+env]
	if !ok {
		return nil, fmt.Errorf("%s: the outputs of stack %s environment %s were not read", r.Address, stack, env)
	}
	flat := pulumi.Map{}
	known := map[string]any{}
	for _, addr := range keys(outs) {
		flat[addr] = toInput(outs[addr])
		known[addr] = outs[addr]
	}
	name := StackReferenceName(stack, env)
	return &Registered{
		Outputs:  pulumi.Map{"stack": pulumi.String(name), "outputs": flat},
		Known:    map[string]any{"stack": name, "outputs": known},
		Children: map[string]*Child{},
	}, nil
}

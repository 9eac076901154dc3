package pulumiadapter

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// StackReferenceType is Pulumi's built-in stack reference resource.
const StackReferenceType = "pulumi:pulumi:StackReference"

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
		Tokens:    []string{StackReferenceType},
		ReplaceOn: []string{"stack", "environment"},
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
	res, err := r.child(token, r.Name, props)
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
// (project = deployer stack, Pulumi stack = environment; SPEC 8).
func StackReferenceName(stack, env string) string {
	return DIYOrganization + "/" + stack + "/" + env
}

func registerStackReference(r *Registration) (*Registered, error) {
	stack := str(r.Config, "stack", "")
	if stack == "" {
		return nil, fmt.Errorf("%s: config stack is required (the deployer stack whose outputs to read)", r.Address)
	}
	env := str(r.Config, "environment", r.Ctx.Stack())
	name := StackReferenceName(stack, env)
	ref := &Child{}
	err := r.Ctx.ReadResource(StackReferenceType, r.Name, pulumi.ID(name),
		pulumi.Map{"name": pulumi.String(name)}, ref, pulumi.Parent(r.Parent))
	if err != nil {
		return nil, fmt.Errorf("register stack reference %s of %s: %w", name, r.Address, err)
	}
	// The referenced stack exports one map per component address; its
	// outputs are re-exported here as {address: outputs}.
	outs := ref.Out("outputs").ApplyT(func(v any) map[string]any {
		all, _ := v.(map[string]any)
		flat := make(map[string]any, len(all))
		for addr, comp := range all {
			if m, ok := comp.(map[string]any); ok {
				if o, ok := m["outputs"]; ok {
					flat[addr] = o
					continue
				}
			}
			flat[addr] = comp
		}
		return flat
	}).(pulumi.MapOutput)
	return &Registered{
		Outputs:  pulumi.Map{"stack": pulumi.String(name), "outputs": outs},
		Children: map[string]*Child{"reference": ref},
		Primary:  "reference",
	}, nil
}

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
		OutputsFrom: func(kids []snapResource) map[string]any {
			if len(kids) != 1 {
				return nil
			}
			return map[string]any{"id": kids[0].ID, "properties": cleanMap(kids[0].Outputs)}
		},
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
			in, err := resolve(r, "properties."+k, markByKey(k, m[k]))
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

// markByKey returns v as a secret wrapper when key names a secret
// (docs/secrets.md): Pulumi then stores it encrypted.
func markByKey(key string, v any) any {
	if v != nil && plan.IsSecretKey(key) && !plan.IsSecretValue(v) {
		return map[string]any{"secret": true, "value": v}
	}
	return v
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
			in, err := resolve(r, path+"."+k, markByKey(k, m[k]))
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

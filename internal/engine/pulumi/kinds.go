package pulumi

import (
	"fmt"
	"sort"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Kind describes one Pulumi-backed component kind (docs/kinds.md).
type Kind struct {
	// Name is the kind as written in deployer.yaml ("RDS").
	Name string
	// Tokens are the type tokens of the resources the kind registers.
	Tokens []string
	// Suffixes are what the names of its resources add to the component's
	// name, besides nothing ("-cpu": "app-api-cpu"); a resource's name
	// tells which component it belongs to (docs/pulumi.md#resource-layout).
	Suffixes []string
	// ReplaceOn lists dotted config paths whose change forces replacement of
	// the component (plan.Options.ReplaceOn, docs/plan.md#diff-rules).
	ReplaceOn []string
	// Actual maps child output properties to the component's actual_state;
	// nil means every output property of the primary child.
	Actual []StateField
	// Register declares the component's resources from its config (each
	// through Registration.child) and returns its outputs. It must not
	// block on outputs.
	Register func(r *Registration) (*Registered, error)
	// OutputsFrom, when set, derives the component's outputs from its
	// children in Pulumi's state, as Register's Outputs resolve: used for
	// a component whose children exist but whose run did not finish
	// (cancelled), so state records them with their outputs. Nil leaves
	// such a component with the outputs it had.
	OutputsFrom func(kids []snapResource) map[string]any
}

// StateField is one actual_state key: the output property Prop ("id" for the
// resource id) of the child registered under Role.
type StateField struct{ Key, Role, Prop string }

// Registration is what a kind's Register receives.
type Registration struct {
	Ctx *pulumi.Context
	// Address is the component path "service/component"; Name its URN-safe
	// form "service-component", used as the name of its resources.
	Address, Name string
	// Config is the component's config with the environment's overrides merged.
	Config map[string]any
	// comp is the component; deps the resources it waits for (depends_on):
	// what options gives every resource it registers.
	comp Component
	deps []pulumi.Resource
	// Ref resolves a "${service/component.key}" reference (PulumiResource
	// properties); nil when references are not supported.
	Ref func(ref string) (pulumi.Input, bool, error)
}

// Registered is what a kind's Register returns.
type Registered struct {
	// Outputs become the resource's "outputs" in state.json.
	Outputs pulumi.Map
	// Known, when set, are the same outputs as plain values known before
	// the run (StackReference); references read them instead of Outputs.
	Known map[string]any
	// Children are the registered children by role ("instance", "service").
	Children map[string]*Child
	// Primary is the role of the only child of a single-resource kind: its
	// URN and id are written as pulumi: {urn, id} (docs/state-format.md#document). Empty for
	// multi-resource kinds, which write pulumi: {urns: [...]}.
	Primary string
}

// Child is a resource registered by type token, with every output property
// available as Props (no provider SDK is compiled in).
type Child struct {
	pulumi.CustomResourceState
	Props pulumi.MapOutput `pulumi:""`
}

// Out returns the output property key of the child as an AnyOutput.
func (c *Child) Out(key string) pulumi.AnyOutput {
	return c.Props.ApplyT(func(m map[string]any) any { return m[key] }).(pulumi.AnyOutput)
}

func (r *Registration) child(token, name string, props pulumi.Map, opts ...pulumi.ResourceOption) (*Child, error) {
	c := &Child{}
	opts = append(r.options(name), opts...)
	if err := r.Ctx.RegisterResource(token, name, props, c, opts...); err != nil {
		return nil, fmt.Errorf("register %s %q of %s: %w", token, name, r.Address, err)
	}
	return c, nil
}

// tags are the AWS tags every AWS child carries.
// fields reads the component's typed config values; check its err after the
// reads.
func (r *Registration) fields() *fields {
	return &fields{cfg: r.Config, addr: r.Address}
}

func (r *Registration) tags() pulumi.StringMap {
	return pulumi.StringMap{
		"deployer:stack":       pulumi.String(r.Ctx.Project()),
		"deployer:environment": pulumi.String(r.Ctx.Stack()),
		"deployer:component":   pulumi.String(r.Address),
	}
}

var catalog = map[string]*Kind{}

func register(k *Kind) { catalog[k.Name] = k }

// Lookup returns the kind named name, or false when it is not a Pulumi kind.
func Lookup(name string) (*Kind, bool) {
	k, ok := catalog[name]
	return k, ok
}

// IsPulumiKind reports whether components of kind are applied by the Pulumi
// engine (and so need the Pulumi CLI).
func IsPulumiKind(kind string) bool {
	_, ok := catalog[kind]
	return ok
}

// Kinds returns the names of the Pulumi kinds, sorted.
func Kinds() []string {
	names := make([]string, 0, len(catalog))
	for n := range catalog {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ReplaceOn returns the dotted config paths whose change forces replacement
// of a component of kind (plan.Options.ReplaceOn); nil for other kinds.
func ReplaceOn(kind string) []string {
	if k, ok := catalog[kind]; ok {
		return append([]string(nil), k.ReplaceOn...)
	}
	return nil
}

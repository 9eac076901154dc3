package pulumi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/deployer-dev/deployer/internal/plan"
)

// Component is one Pulumi component declared by the inline program.
type Component struct {
	Address   string // "service/component"
	Kind      string
	Config    map[string]any
	DependsOn []string // full addresses; those not in the program are ignored
	// Kept marks a component the run keeps as it is (not one of its
	// steps): its outputs are recorded without the deployment id, so
	// Pulumi sees them unchanged and skips rewriting its checkpoint for it.
	Kept bool
	// Protect is the component's protect: (plan.Step.Protect), passed as
	// Pulumi's protect option; its children inherit it.
	Protect bool
	// Aliases are the Pulumi names the component had before a move
	// (formerNames), passed as Pulumi aliases so its resources are renamed,
	// not replaced.
	Aliases []string
}

// Name is the URN-safe name of the component and of its children:
// "service/component" -> "service-component".
func (c Component) Name() string { return strings.ReplaceAll(c.Address, "/", "-") }

// Components returns the components the program must declare for an apply:
// every step of keep (with the config last applied, from state, when known)
// and every step of apply that is not a Delete. Steps of other kinds are
// skipped. A later duplicate address replaces an earlier one.
func Components(keep, apply []plan.Step) []Component {
	byAddr := map[string]int{}
	var out []Component
	add := func(s plan.Step, cfg map[string]any, kept bool) {
		if !IsPulumiKind(s.Kind) {
			return
		}
		c := Component{Address: s.Address, Kind: s.Kind, Config: cfg, DependsOn: s.DependsOn, Kept: kept, Protect: s.Protect,
			Aliases: formerNames(s)}
		if i, ok := byAddr[s.Address]; ok {
			out[i] = c
			return
		}
		byAddr[s.Address] = len(out)
		out = append(out, c)
	}
	for _, s := range keep {
		cfg := s.Config
		if s.Prior != nil && s.Prior.DesiredConfig != nil {
			cfg = s.Prior.DesiredConfig
		}
		add(s, cfg, true)
	}
	for _, s := range apply {
		if s.Action != plan.Delete {
			add(s, s.Config, false)
		}
	}
	return out
}

// order returns comps with every dependency (within comps) before its
// dependents, keeping the given order otherwise. A cycle is an error naming it.
func order(comps []Component) ([]Component, error) {
	idx := map[string]int{}
	for i, c := range comps {
		idx[c.Address] = i
	}
	state := make([]int, len(comps)) // 0 new, 1 visiting, 2 done
	var out []Component
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		switch state[i] {
		case 1:
			return fmt.Errorf("depends_on cycle: %s", strings.Join(append(path, comps[i].Address), " -> "))
		case 2:
			return nil
		}
		state[i] = 1
		for _, d := range comps[i].DependsOn {
			if j, ok := idx[d]; ok {
				if err := visit(j, append(path, comps[i].Address)); err != nil {
					return err
				}
			}
		}
		state[i] = 2
		out = append(out, comps[i])
		return nil
	}
	for i := range comps {
		if err := visit(i, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Declared is one component declared by the program.
type Declared struct {
	Component pulumi.Resource
	// Value resolves to the map exported as stack output {address}:
	// {"outputs": {...}, "actual_state": {...}, "pulumi": {"urn","id"} or {"urns"}}.
	Value pulumi.MapOutput
	// children are the component's child resources, sorted by role: what a
	// dependent component must name in pulumi.DependsOn (see dependsOn).
	children []pulumi.Resource
	// known are outputs known before the run (Registered.Known).
	known map[string]any
}

// dependsOn returns the resources a component depending on d must list in
// pulumi.DependsOn: d's children themselves, not d.Component. The Go SDK
// expands DependsOn on a component resource to the children it has recorded
// so far, and it records a child only from the goroutine that registers (or,
// for a StackReference, reads) it, so DependsOn(component) may silently miss
// children not yet recorded and the engine would then run the dependent
// before them. Naming the custom children makes the SDK await their URNs.
func (d *Declared) dependsOn() []pulumi.Resource {
	return d.children
}

// Declare registers every component (ordered by depends_on, each with
// pulumi.DependsOn on the children of the components it depends on, so the
// dependency does not hinge on goroutine timing) and returns them by
// address. external holds plain outputs of components applied by other
// engines, for ${address.key} references. Each component resource records
// {"deployer": value, "deployment_id": deploymentID} as its outputs, so a
// failed or cancelled run can tell from Pulumi's state which components it
// finished; a kept one (Component.Kept) records {"deployer": value} only.
func Declare(ctx *pulumi.Context, comps []Component, external map[string]map[string]any, deploymentID string) (map[string]*Declared, error) {
	ordered, err := order(comps)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, c := range ordered {
		if prev, ok := names[c.Name()]; ok {
			return nil, fmt.Errorf("components %s and %s both map to the Pulumi name %q: rename one of them", prev, c.Address, c.Name())
		}
		names[c.Name()] = c.Address
	}
	declared := map[string]*Declared{}
	for _, c := range ordered {
		kind, ok := Lookup(c.Kind)
		if !ok {
			return nil, fmt.Errorf("%s: kind %q is not a Pulumi kind (one of %s)", c.Address, c.Kind, strings.Join(Kinds(), ", "))
		}
		var deps []pulumi.Resource
		for _, d := range c.DependsOn {
			if dd, ok := declared[d]; ok {
				deps = append(deps, dd.dependsOn()...)
			}
		}
		comp := &componentResource{}
		opts := []pulumi.ResourceOption{pulumi.DependsOn(deps), pulumi.Protect(c.Protect)}
		if len(c.Aliases) > 0 {
			opts = append(opts, pulumi.Aliases(aliases(c.Aliases)))
		}
		if err := ctx.RegisterComponentResource(ComponentType+c.Kind, c.Name(), comp, opts...); err != nil {
			return nil, fmt.Errorf("register component %s: %w", c.Address, err)
		}
		reg := &Registration{Ctx: ctx, Address: c.Address, Name: c.Name(), Config: c.Config, Parent: comp,
			Ref: refResolver(declared, external)}
		if reg.Config == nil {
			reg.Config = map[string]any{}
		}
		out, err := kind.Register(reg)
		if err != nil {
			return nil, err
		}
		value := pulumi.Map{
			"outputs": out.Outputs,
			"pulumi":  pulumiInfo(out),
		}.ToMapOutput()
		recorded := pulumi.Map{"deployer": value}
		if !c.Kept {
			recorded["deployment_id"] = pulumi.String(deploymentID)
		}
		if err := ctx.RegisterResourceOutputs(comp, recorded); err != nil {
			return nil, fmt.Errorf("register outputs of %s: %w", c.Address, err)
		}
		children := make([]pulumi.Resource, 0, len(out.Children))
		for _, role := range keys(out.Children) {
			children = append(children, out.Children[role])
		}
		declared[c.Address] = &Declared{Component: comp, Value: value, children: children, known: out.Known}
	}
	return declared, nil
}

type componentResource struct{ pulumi.ResourceState }

// Program is the inline program of one `up`/`preview`: it declares comps and
// exports stack output {address} for each (see Declared.Value).
func Program(comps []Component, external map[string]map[string]any, deploymentID string) pulumi.RunFunc {
	return func(ctx *pulumi.Context) error {
		declared, err := Declare(ctx, comps, external, deploymentID)
		if err != nil {
			return err
		}
		for addr, d := range declared {
			ctx.Export(addr, d.Value)
		}
		return nil
	}
}

func pulumiInfo(out *Registered) pulumi.Map {
	if p, ok := out.Children[out.Primary]; ok {
		return pulumi.Map{"urn": p.URN(), "id": p.ID()}
	}
	roles := keys(out.Children)
	if len(roles) == 0 {
		return pulumi.Map{}
	}
	urns := make([]any, 0, len(roles))
	for _, r := range roles {
		urns = append(urns, out.Children[r].URN())
	}
	return pulumi.Map{"urns": pulumi.All(urns...).ApplyT(func(v []any) []string {
		s := make([]string, 0, len(v))
		for _, u := range v {
			s = append(s, fmt.Sprint(u))
		}
		sort.Strings(s)
		return s
	}).(pulumi.StringArrayOutput)}
}

// refResolver resolves "${service/component.key.sub}" against the outputs of
// components declared earlier in the program, then against external outputs.
func refResolver(declared map[string]*Declared, external map[string]map[string]any) func(string) (pulumi.Input, bool, error) {
	return func(ref string) (pulumi.Input, bool, error) {
		m := refRE.FindStringSubmatch(ref)
		if m == nil {
			return nil, false, fmt.Errorf("%q is not a reference of the form ${service/component.output}", ref)
		}
		addr, path := m[1], strings.Split(strings.TrimPrefix(m[2], "."), ".")
		if d, ok := declared[addr]; ok && d.known != nil {
			// Read from plain values, so a secret elsewhere in the
			// component's outputs does not make this one secret.
			v, err := walk(d.known, path, ref)
			if err != nil {
				return nil, true, err
			}
			return toInput(v), true, nil
		}
		if d, ok := declared[addr]; ok {
			return d.Value.ApplyT(func(v map[string]any) (any, error) {
				return walk(v["outputs"], path, ref)
			}).(pulumi.AnyOutput), true, nil
		}
		if o, ok := external[addr]; ok {
			v, err := walk(o, path, ref)
			if err != nil {
				return nil, true, err
			}
			return toInput(v), true, nil
		}
		return nil, false, nil
	}
}

func walk(v any, path []string, ref string) (any, error) {
	for _, p := range path {
		m, ok := asMap(v)
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a map", ref, p)
		}
		v, ok = m[p]
		if !ok {
			return nil, fmt.Errorf("%s: no output %q (have %s)", ref, p, strings.Join(keys(m), ", "))
		}
	}
	return v, nil
}

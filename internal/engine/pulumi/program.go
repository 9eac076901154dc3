package pulumi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/deployer-dev/deployer/internal/dag"
	"github.com/deployer-dev/deployer/internal/plan"
)

// Component is one Pulumi component declared by the inline program.
type Component struct {
	Address   string // "service/component"
	Kind      string
	Config    map[string]any
	DependsOn []string // full addresses; those not in the program are ignored
	// Protect is the component's protect: (plan.Step.Protect), passed as
	// Pulumi's protect option of each of its resources.
	Protect bool
	// Aliases are the Pulumi names the component had before a move
	// (formerNames): each resource gets its name with the former one in
	// place of the component's as a Pulumi alias, so it is renamed, not
	// replaced.
	Aliases []string
	// Wrapper is the URN of the component resource the previous layout
	// kept the component's resources under, when deployer's state records
	// them there (wrapperOf); each resource gets an alias under it.
	Wrapper string
	// ImportID is the id of the existing resource the component adopts
	// (importOf), passed as Pulumi's import option of its resource; "" for
	// one that is not being imported.
	ImportID string
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
	add := func(s plan.Step, cfg map[string]any) {
		if !IsPulumiKind(s.Kind) {
			return
		}
		c := Component{Address: s.Address, Kind: s.Kind, Config: cfg, DependsOn: s.DependsOn, Protect: s.Protect,
			Aliases: formerNames(s), Wrapper: wrapperOf(s), ImportID: importOf(s)}
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
		add(s, cfg)
	}
	for _, s := range apply {
		if s.Action != plan.Delete {
			add(s, s.Config)
		}
	}
	return out
}

// order returns comps with every dependency (within comps) before its
// dependents, keeping the given order otherwise (dag.Graph.Order with the
// index as the tie-break). A cycle is a *dag.CycleError naming it.
func order(comps []Component) ([]Component, error) {
	names := make([]string, len(comps))
	idx := make(map[string]int, len(comps))
	for i, c := range comps {
		names[i] = c.Address
		idx[c.Address] = i
	}
	g := dag.New(names)
	for i, c := range comps {
		for _, d := range c.DependsOn {
			if j, ok := idx[d]; ok {
				g.Edge(j, i)
			}
		}
	}
	sorted, err := g.Order(func(a, b int) bool { return a < b })
	if err != nil {
		return nil, err
	}
	out := make([]Component, len(sorted))
	for k, i := range sorted {
		out[k] = comps[i]
	}
	return out, nil
}

// Declared is one component declared by the program.
type Declared struct {
	// Value resolves to the component's value recorded in state:
	// {"outputs": {...}, "pulumi": {"urn","id"} or {"urns"}}. It resolves
	// once Pulumi has applied and saved every resource of the component.
	Value pulumi.MapOutput
	// children are the component's resources, sorted by role: what a
	// dependent component must name in pulumi.DependsOn.
	children []pulumi.Resource
	// known are outputs known before the run (Registered.Known).
	known map[string]any
}

// Declare registers the resources of every component (ordered by
// depends_on, each with pulumi.DependsOn on the resources of the
// components it depends on) at the root of the stack
// (docs/pulumi.md#resource-layout) and returns them by address. external
// holds plain outputs of components applied by other engines, for
// ${address.key} references.
func Declare(ctx *pulumi.Context, comps []Component, external map[string]map[string]any) (map[string]*Declared, error) {
	ordered, err := order(comps)
	if err != nil {
		return nil, err
	}
	if err := checkNames(ordered); err != nil {
		return nil, err
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
				deps = append(deps, dd.children...)
			}
		}
		reg := &Registration{Ctx: ctx, Address: c.Address, Name: c.Name(), Config: c.Config, comp: c, deps: deps,
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
		children := make([]pulumi.Resource, 0, len(out.Children))
		for _, role := range keys(out.Children) {
			children = append(children, out.Children[role])
		}
		declared[c.Address] = &Declared{Value: value, children: children, known: out.Known}
	}
	return declared, nil
}

// checkNames refuses two components whose resources would share a name
// (the name tells which component a resource belongs to).
func checkNames(comps []Component) error {
	names := map[string]string{}
	for _, c := range comps {
		for _, n := range childNames(c.Name(), c.Kind) {
			if prev, ok := names[n]; ok && prev != c.Address {
				return fmt.Errorf("components %s and %s both map to the Pulumi name %q: rename one of them", prev, c.Address, n)
			}
			names[n] = c.Address
		}
	}
	return nil
}

// Program is the inline program of one `up`/`preview`: it declares comps
// and, when done is not nil, records in it each component whose resources
// Pulumi applied and saved (see Declared.Value). It exports no stack
// output: each would be checkpointed with every step of every later run,
// and deployer reads none (the SDK waits for the recording to finish before
// the program ends, as for any output).
func Program(comps []Component, external map[string]map[string]any, done *finished) pulumi.RunFunc {
	return func(ctx *pulumi.Context) error {
		declared, err := Declare(ctx, comps, external)
		if err != nil {
			return err
		}
		for addr, d := range declared {
			done.watch(addr, d.Value)
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

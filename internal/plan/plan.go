package plan

import (
	"maps"
	"slices"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/policy/verdict"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// FormatVersion is the format_version of plan JSON and saved plans (docs/plan.md).
const FormatVersion = "deployer-plan-v1"

// Options tune Build.
type Options struct {
	// ReplaceOn gives, per kind, the dotted config paths whose change forces
	// replacement ("engine.type"); nil means none.
	ReplaceOn func(kind string) []string
	// Scope is "" (the whole stack), "svc" or "svc/comp": only components
	// in scope get steps.
	Scope string
	// Destroy plans the deletion of every component in scope that is in state.
	Destroy bool
	// Now stamps CreatedAt; default time.Now.
	Now func() time.Time
	// Read holds, by address, the outputs of data components (a
	// StackReference: engine.Kind.Read) as read when planning. They stand
	// for those components' outputs in state when their dependents'
	// recorded inputs are compared, and a data component whose recorded
	// outputs differ is an update with (outputs) diffs (docs/plan.md
	// "References to other stacks").
	Read map[string]map[string]any
	// Settings gives, per kind, how the plan treats the kind's own
	// settings (KindSettings); nil: every kind records none.
	Settings func(kind string) KindSettings
	// Moves are the moves applied to the state the plan is built against
	// (ApplyMoves): the step of each destination shows where it moved
	// from (Step.MovedFrom).
	Moves []Move
	// Replace are the components to replace though nothing in their
	// config forces it (plan and deploy --replace ADDR, Terraform's
	// -replace): each must be in the state and in scope, or Build fails.
	Replace []string
}

// Plan is the ordered steps that bring one stack/environment from its state
// to its configuration (docs/plan.md#diff-rules). Its JSON is the documented schema of
// `plan --json` and of saved plans (docs/plan.md).
type Plan struct {
	FormatVersion string `json:"format_version"` // "deployer-plan-v1"
	Stack         string `json:"stack"`
	Environment   string `json:"environment"`
	// Lineage and Serial identify the state the plan was made against; ""
	// and 0 when there was no state yet.
	Lineage string `json:"lineage"`
	Serial  int64  `json:"serial"`
	Scope   string `json:"scope"` // "", "svc", "svc/comp" or a list (InScope)
	// Replace are the components replaced on request (Options.Replace),
	// sorted; a saved plan applies them again.
	Replace []string `json:"replace,omitempty"`
	Destroy bool     `json:"destroy"`
	Steps   []Step   `json:"steps"` // in apply order, no-ops included
	Summary Summary  `json:"summary"`
	// OutOfScope lists the components outside a --service/--component scope
	// whose inputs may change through this plan's changes: they are not
	// applied without their own lock (docs/plan.md "Scope"). Omitted when none.
	OutOfScope []Dependent `json:"out_of_scope,omitempty"`
	CreatedAt  time.Time   `json:"created_at"`
	// Binding is what a saved plan binds (docs/plan.md "Saved plans");
	// set by the deploy use case, nil in a plan built by Build alone.
	Binding *Binding `json:"binding,omitempty"`
	// Policy is the results of the policies the plan was checked against
	// (docs/policy.md#where-policies-apply); nil when none were.
	Policy *verdict.Report `json:"policy,omitempty"`
	// Outputs are the changes to the stack's outputs, by output name, values
	// masked (docs/operations.md#stack-outputs); omitted when none.
	Outputs []FieldDiff `json:"outputs,omitempty"`
}

// Summary counts the steps by action.
type Summary struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
	NoOp    int `json:"no_op"`
	// Reevaluate counts the no-op steps marked Reevaluate (also in NoOp).
	Reevaluate int `json:"reevaluate"`
	// Move counts the steps that move a state entry (Step.MovedFrom; also
	// counted under their action); omitted when none.
	Move int `json:"move,omitempty"`
	// Import counts the Import steps; omitted when none.
	Import int `json:"import,omitempty"`
}

// Dependent is a component outside the plan's scope whose inputs come from
// a component the plan changes (InputsFrom, full addresses).
type Dependent struct {
	Address    string   `json:"address"`
	InputsFrom []string `json:"inputs_from"`
}

// HasChanges reports whether any step is not a no-op or is re-evaluated.
func (p *Plan) HasChanges() bool {
	s := p.Summary
	return s.Create+s.Update+s.Replace+s.Delete+s.Import+s.Reevaluate+s.Move > 0 || len(p.Outputs) > 0
}

// Changes returns the steps that are not no-ops, and the re-evaluated
// and moved no-ops, in apply order.
func (p *Plan) Changes() []Step {
	out := make([]Step, 0, len(p.Steps)-p.Summary.NoOp+p.Summary.Reevaluate+p.Summary.Move)
	for _, s := range p.Steps {
		if s.Changes() {
			out = append(out, s)
		}
	}
	return out
}

// Build diffs desired against st (nil: no state yet) and returns the plan, its
// steps in apply order (docs/plan.md). Errors: *CycleError when depends_on
// (or, for deletes, the state's dependencies) form a cycle.
func Build(desired *config.Resolved, st *statestore.State, o Options) (*Plan, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	p := &Plan{FormatVersion: FormatVersion, Stack: desired.Stack, Environment: desired.Env, Scope: o.Scope, Destroy: o.Destroy, CreatedAt: now().UTC()}
	var prior map[string]*statestore.Resource
	if st != nil {
		p.Lineage, p.Serial, prior = st.Lineage, st.Serial, st.Resources
		if p.Stack == "" {
			p.Stack = st.Metadata.Stack
		}
	}
	in := inScope(o.Scope, maps.Keys(desired.Components), maps.Keys(prior))
	var err error
	if p.Replace, err = replaceList(desired, o, in); err != nil {
		return nil, err
	}
	movedFrom := movedSources(o.Moves)
	steps := make([]Step, 0, len(desired.Components)+len(prior))
	inputs := newStateInputs(prior, o.Read)
	for addr, c := range desired.Components {
		if !in[addr] {
			continue
		}
		old := prior[addr]
		if o.Destroy {
			if old != nil {
				s := deleteStep(addr, old, o.kind(old.Kind))
				s.Protect = c.Protect
				if c.Settings != nil {
					s.Settings = c.Settings
				}
				s.Runs = o.kind(old.Kind).runs(s.Settings)
				steps = append(steps, s)
			}
			continue
		}
		s := diffStep(c, old, o.ReplaceOn, o.kind(c.Kind))
		if old != nil {
			s.MovedFrom = movedFrom[addr]
		}
		if err := importStep(&s, c, old); err != nil {
			return nil, err
		}
		if err := forceReplace(&s, o.Replace); err != nil {
			return nil, err
		}
		if s.Action == Replace {
			s.PriorSettings = priorSettings(old, c, o)
			s.Runs = o.kind(old.Kind).runs(s.PriorSettings) // the existing instance's kind deletes it
		}
		if read, ok := o.Read[addr]; ok {
			readDiffs(&s, read)
		}
		inputs.diff(&s)
		steps = append(steps, s)
	}
	for addr, old := range prior {
		if _, ok := desired.Components[addr]; !ok && in[addr] {
			steps = append(steps, deleteStep(addr, old, o.kind(old.Kind)))
		}
	}
	ordered, err := order(steps)
	if err != nil {
		return nil, err
	}
	p.Steps = ordered
	propagate(ordered)
	if p.Outputs, err = outputDiffs(desired.Outputs, st, ordered); err != nil {
		return nil, err
	}
	if o.Scope != "" && !o.Destroy {
		p.OutOfScope = outOfScope(desired, ordered, in)
	}
	for _, s := range ordered {
		p.Summary.count(s)
	}
	return p, nil
}

// count adds step s to the counts.
func (c *Summary) count(s Step) {
	if s.Reevaluate {
		c.Reevaluate++
	}
	if s.MovedFrom != "" {
		c.Move++
	}
	switch s.Action {
	case Create:
		c.Create++
	case Update:
		c.Update++
	case Replace:
		c.Replace++
	case Delete:
		c.Delete++
	case Import:
		c.Import++
	default:
		c.NoOp++
	}
}

// deleteStep deletes the state resource old at addr, with the settings the
// state recorded for it (Runs says what its delete runs).
func deleteStep(addr string, old *statestore.Resource, k KindSettings) Step {
	svc, comp := config.SplitAddress(addr)
	settings, _ := k.recorded(old)
	return Step{Address: addr, Service: svc, Component: comp, Kind: old.Kind, Action: Delete, DependsOn: slices.Clone(old.Dependencies),
		Prior: old, Settings: settings, Runs: k.runs(settings), Protect: old.Lifecycle.Protect}
}

// diffStep compares one desired component with its state entry (nil: create).
func diffStep(c *config.ResolvedComponent, old *statestore.Resource, replaceOn func(string) []string, k KindSettings) Step {
	s := Step{
		Address: c.Address, Service: c.Service, Component: c.Name, Kind: c.Kind,
		DependsOn: slices.Clone(c.DependsOn), Config: c.Config, Settings: c.Settings, Prior: old,
		InputDeps: InputDeps(c.DependsOn), Secrets: c.Secrets, Protect: c.Protect,
	}
	if s.Config == nil {
		s.Config = map[string]any{}
	}
	d := &differ{secrets: c.Secrets}
	if old == nil {
		s.Action = Create
		d.compare("", nil, c.Config)
		for _, name := range unionKeys(nil, c.Settings) {
			d.compare(name, nil, c.Settings[name])
		}
		s.Diffs = d.out
		return s
	}
	if !Equal(old.DesiredConfig, c.Config) {
		d.compare("", old.DesiredConfig, c.Config)
	}
	settingsDiffs(d, c.Settings, old, k)
	var forced []string
	if replaceOn != nil {
		forced = replaceOn(c.Kind)
	}
	replace := false
	for i := range d.out {
		if forcesReplacement(d.out[i].Path, forced) {
			d.out[i].ForcesReplacement = true
			replace = true
		}
	}
	if old.Kind != c.Kind {
		d.out = append([]FieldDiff{{Path: PathKind, Old: old.Kind, New: c.Kind, Op: OpChange, ForcesReplacement: true}}, d.out...)
		replace = true
	}
	if !sameSet(old.Dependencies, c.DependsOn) {
		d.out = append(d.out, FieldDiff{Path: PathDependsOn, Old: sortedSet(old.Dependencies), New: sortedSet(c.DependsOn), Op: OpChange})
	}
	s.Diffs = d.out
	protectDiff(&s)
	d.out = s.Diffs
	if len(d.out) == 0 && old.Status != "" && old.Status != statestore.ResourceReady {
		d.out = append(d.out, FieldDiff{Path: PathStatus, Old: string(old.Status), New: string(statestore.ResourceReady), Op: OpChange})
	}
	s.Diffs = d.out
	switch {
	case replace:
		s.Action = Replace
	case len(d.out) > 0:
		s.Action = Update
	default:
		s.Action = NoOp
	}
	return s
}

func sameSet(a, b []string) bool {
	set := make(map[string]bool, len(a))
	for _, x := range a {
		set[x] = true
	}
	other := make(map[string]bool, len(b))
	for _, x := range b {
		if !set[x] {
			return false
		}
		other[x] = true
	}
	return len(other) == len(set)
}

func sortedSet(a []string) []string {
	out := append([]string{}, a...)
	slices.Sort(out)
	return slices.Compact(out)
}

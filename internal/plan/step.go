package plan

import (
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Action is what a plan does to one component (docs/plan.md#actions).
type Action string

const (
	Create  Action = "create"
	Update  Action = "update"
	Replace Action = "replace" // a field the kind marks as forcing replacement changed
	Delete  Action = "delete"
	NoOp    Action = "no-op"
	// Import adopts an instance that exists outside deployer by its id
	// (Step.ImportID) instead of creating one: nothing is created
	// (docs/operations.md#import).
	Import Action = "import"
)

// FieldDiff is one changed leaf of a component's config, addressed by a dotted
// path ("scaling.minReplicas", "ports[0]"). Old is nil on add, New nil on remove.
// Secret values are already masked ("(sensitive)") when Sensitive is true.
type FieldDiff struct {
	Path              string `json:"path"`
	Old               any    `json:"old,omitempty"`
	New               any    `json:"new,omitempty"`
	Op                string `json:"op"` // add | change | remove
	ForcesReplacement bool   `json:"forces_replacement,omitempty"`
	Sensitive         bool   `json:"sensitive,omitempty"`
	// Unknown marks a new value known only after the apply (a stack
	// output of a component the plan changes): New is KnownAfterApply,
	// shown as it is even when Sensitive.
	Unknown bool `json:"unknown,omitempty"`
}

// Step is the action on one component, in apply order.
type Step struct {
	Address   string      `json:"address"` // "service/component"
	Service   string      `json:"service"`
	Component string      `json:"component"`
	Kind      string      `json:"kind"`
	Action    Action      `json:"action"`
	Diffs     []FieldDiff `json:"diffs,omitempty"`
	DependsOn []string    `json:"depends_on,omitempty"` // full addresses
	// Reevaluate marks a no-op step whose inputs may change because a
	// dependency in InputsFrom is created, updated, replaced or itself
	// re-evaluated: deploy re-diffs it once those are applied and updates it
	// only if its resolved inputs changed (docs/plan.md "Changes flow to
	// dependents"). Like Terraform's "(known after apply)".
	Reevaluate bool `json:"reevaluate,omitempty"`
	// InputsFrom lists the dependencies (full addresses) with a planned
	// change or re-evaluation whose outputs feed this step; omitted when none.
	InputsFrom []string `json:"inputs_from,omitempty"`
	// InputDeps are the addresses whose outputs are this component's inputs
	// (InputDeps); nil on deletes.
	InputDeps []string `json:"-"`
	// Config is the desired config with the environment's overrides merged
	// (unmasked: engines need real values). Nil on delete.
	Config map[string]any `json:"-"`
	// Settings are the kind's own sections as its engine decoded them
	// (config.ResolvedComponent.Settings); for a delete, the ones the state
	// recorded, or with destroy the configured ones.
	Settings map[string]map[string]any `json:"-"`
	// PriorSettings are, on a replace, the settings the existing instance
	// is deleted with before the new one is created: the ones its state
	// recorded (KindSettings.Recorded, older forms included), or the
	// desired ones when a state of the same kind recorded none (taken as
	// unchanged, as their diff is); nil otherwise (docs/plan.md#actions).
	PriorSettings map[string]map[string]any `json:"-"`
	// Runs is, on a delete step, what the delete runs as the kind's engine
	// says it (KindSettings.Runs): for a Command component the exact shell
	// command, "" when it has none (it is only removed from the state); on
	// a replace, what the delete of the existing instance runs (from
	// PriorSettings, as the existing instance's kind says it). Nil when the
	// kind says nothing (docs/plan.md).
	Runs *string `json:"runs,omitempty"`
	// DeletedBy is, on a replace whose old kind (Prior.Kind) is applied by
	// another engine than its new kind, the name of the engine that deletes
	// the existing instance before the new kind's engine creates the new
	// one ("pulumi"); set by the deploy use case, which knows the engines,
	// "" otherwise (docs/plan.md#actions).
	DeletedBy string `json:"deleted_by,omitempty"`
	// Protect says the component is protected (docs/configuration.md#protect):
	// its configured protect: flag, or for a component no longer in
	// deployer.yaml the one its state recorded. CheckProtected refuses a
	// plan that deletes or replaces it.
	Protect bool `json:"protect,omitempty"`
	// MovedFrom is, on a component whose state entry a move brought to
	// Address (Options.Moves), the address it had: the step applies its
	// action (a no-op when only the address changed) to the moved entry,
	// and nothing is deleted or created for the move
	// (docs/operations.md#moves). "" otherwise.
	MovedFrom string `json:"moved_from,omitempty"`
	// Drift is, on an update that reads the component again (a changed
	// command.read, engine.Kind.RereadOn), how what the plan read differs
	// from actual_state, masked; the apply records it
	// (docs/operations.md#refresh-only).
	Drift []FieldDiff `json:"drift,omitempty"`
	// Reread is the actual_state such a plan read, unmasked: what the
	// apply records; nil when the plan read nothing.
	Reread map[string]any `json:"-"`
	// ImportID is, on an Import step, the id of the existing instance the
	// component adopts (its import: block, or deployer import); "" on
	// every other step.
	ImportID string `json:"import_id,omitempty"`
	// Prior is the resource in state; nil on create.
	Prior *statestore.Resource `json:"-"`
	// Secrets are the dotted paths the component lists under secrets:
	// (config.ResolvedComponent.Secrets): masked wherever it is shown.
	Secrets []string `json:"-"`
	// ShownConfig and ShownSettings are Config and Settings masked, set only
	// in Plan.Document (plan --json, the policy input): config omitted on
	// deletes, settings when the kind has none (docs/plan.md "JSON").
	ShownConfig   map[string]any            `json:"config,omitempty"`
	ShownSettings map[string]map[string]any `json:"settings,omitempty"`
}

// Changes reports whether the step changes anything: an action other
// than no-op, a re-evaluation or a move.
func (s Step) Changes() bool {
	return s.Action != NoOp || s.Reevaluate || s.MovedFrom != ""
}

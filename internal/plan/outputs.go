package plan

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/jsontree"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// KnownAfterApply is the value a plan shows for a new stack output whose
// component this plan creates or changes.
const KnownAfterApply = "(known after apply)"

// StackOutputs returns the stack's outputs that refs name
// (docs/operations.md#stack-outputs), each read from its component's
// outputs (outputs(address); false when the component has no entry). An
// output whose component or key is missing is left out. A value under a
// key that names a secret (password, token, ...) is marked secret
// ({secret: true, value: X}), so it is sealed in state and masked in output
// as the component's own output is. Values are copies.
func StackOutputs(refs map[string]config.OutputRef, outputs func(address string) (map[string]any, bool)) map[string]any {
	out := make(map[string]any, len(refs))
	for name, ref := range refs {
		o, ok := outputs(ref.Address)
		if !ok {
			continue
		}
		v, ok := ref.Value(o)
		if !ok {
			continue
		}
		if IsSecretKey(ref.Path[len(ref.Path)-1]) {
			v = sensitive.Wrap(v)
		}
		out[name] = jsontree.Copy(v, nil)
	}
	return out
}

// outputDiffs are the changes to the stack's outputs (st.Outputs) that
// applying steps makes, by output name, values masked (Terraform's
// "Changes to Outputs"): an output whose component is deleted is removed;
// one whose component is created, updated, replaced or re-evaluated
// changes to (or, new, is added as) KnownAfterApply, marked Unknown; an
// output added or removed in deployer.yaml, or whose unchanged component's
// recorded value differs, shows its value.
func outputDiffs(refs map[string]config.OutputRef, st *statestore.State, steps []Step) ([]FieldDiff, error) {
	var old map[string]any
	var prior map[string]*statestore.Resource
	if st != nil {
		old, prior = st.Outputs, st.Resources
	}
	if len(refs) == 0 && len(old) == 0 {
		return nil, nil
	}
	byAddr := make(map[string]Step, len(steps))
	for _, s := range steps {
		byAddr[s.Address] = s
	}
	unknown, gone := map[string]bool{}, map[string]bool{}
	next := StackOutputs(refs, func(addr string) (map[string]any, bool) {
		s, planned := byAddr[addr]
		switch {
		case planned && s.Action == Delete:
			gone[addr] = true
			return nil, false
		case planned && (s.Action != NoOp || s.Reevaluate):
			unknown[addr] = true
		}
		r := prior[addr]
		return outputsOrEmpty(r), r != nil
	})
	if err := missingOutputs(refs, prior, func(addr string) bool { return unknown[addr] || gone[addr] }, next); err != nil {
		return nil, err
	}
	var diffs []FieldDiff
	names := slices.Sorted(maps.Keys(refs))
	for _, name := range slices.Sorted(maps.Keys(old)) {
		if _, ok := refs[name]; !ok {
			names = append(names, name)
		}
	}
	for _, name := range names {
		o, had := old[name]
		n, has := next[name]
		ref, declared := refs[name]
		switch {
		case declared && unknown[ref.Address] && !had:
			diffs = append(diffs, FieldDiff{Path: name, Op: OpAdd, New: KnownAfterApply, Unknown: true, Sensitive: isSecret(name, n)})
		case declared && unknown[ref.Address]:
			// Recorded again by the apply, from what its component's
			// create, update or replace writes: Terraform's
			// "~ NAME = OLD -> (known after apply)".
			diffs = append(diffs, MaskDiff(FieldDiff{Path: name, Op: OpChange, Old: o, New: KnownAfterApply, Unknown: true, Sensitive: isSecret(name, o)}))
		case has && !had:
			diffs = append(diffs, MaskDiff(FieldDiff{Path: name, Op: OpAdd, New: n, Sensitive: isSecret(name, n)}))
		case had && !has:
			diffs = append(diffs, MaskDiff(FieldDiff{Path: name, Op: OpRemove, Old: o, Sensitive: isSecret(name, o)}))
		case has && !reflect.DeepEqual(o, n):
			diffs = append(diffs, MaskDiff(FieldDiff{Path: name, Op: OpChange, Old: o, New: n, Sensitive: isSecret(name, o) || isSecret(name, n)}))
		}
	}
	return diffs, nil
}

// missingOutputs refuses a stack output that names a key its component,
// recorded in the state and neither changed nor deleted by the plan, does
// not have: a typo
// would otherwise leave the output out without a word. Errors: one naming
// the first such output (by name), the component and the keys it has.
func missingOutputs(refs map[string]config.OutputRef, prior map[string]*statestore.Resource, changes func(addr string) bool, next map[string]any) error {
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		ref := refs[name]
		r := prior[ref.Address]
		if _, ok := next[name]; ok || r == nil || changes(ref.Address) {
			continue
		}
		return fmt.Errorf("outputs.%s: %s: component %s has no output %s (it has: %s); fix the reference in deployer.yaml (docs/operations.md#stack-outputs)",
			name, ref, ref.Address, strings.Join(ref.Path, "."), orNone(slices.Sorted(maps.Keys(r.Outputs))))
	}
	return nil
}

func orNone(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

func outputsOrEmpty(r *statestore.Resource) map[string]any {
	if r == nil || r.Outputs == nil {
		return map[string]any{}
	}
	return r.Outputs
}

// isSecret: the stack output name holds a secret value.
func isSecret(name string, v any) bool {
	return IsSecretKey(name) || IsSecretValue(v) || sensitive.IsEnvelope(v)
}

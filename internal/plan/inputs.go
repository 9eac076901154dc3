package plan

import (
	"maps"
	"regexp"
	"slices"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// PathInputs is the pseudo-path of diffs in a component's resolved inputs:
// "(inputs).app/build.sha256" is the sha256 output of app/build as the
// component last saw it (old) and as the state has it now (new).
const PathInputs = "(inputs)"

// refRE finds "${service/component.key...}" references in config strings
// (docs/kinds.md).
var refRE = regexp.MustCompile(`\$\{([a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*)\.`)

// InputDeps returns the addresses whose outputs are inputs of a component:
// its depends_on plus every component its config references with
// "${service/component.key}", sorted, without duplicates (docs/plan.md
// "Changes flow to dependents").
func InputDeps(dependsOn []string, cfg map[string]any) []string {
	out := slices.Clone(dependsOn)
	out = appendRefs(out, cfg)
	if len(out) < 2 {
		return out
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func appendRefs(out []string, v any) []string {
	switch t := v.(type) {
	case string:
		if len(t) > 3 && containsRef(t) {
			for _, m := range refRE.FindAllStringSubmatch(t, -1) {
				out = append(out, m[1])
			}
		}
	case map[string]any:
		for _, x := range t {
			out = appendRefs(out, x)
		}
	case []any:
		for _, x := range t {
			out = appendRefs(out, x)
		}
	}
	return out
}

func containsRef(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '$' && s[i+1] == '{' {
			return true
		}
	}
	return false
}

// SealOutputs returns a copy of outputs fit to record as resolved inputs:
// secret values ({secret: true, value: X}, or under a key IsSecretKey
// accepts) become the "sha256:<hex>" digest of their canonical JSON, so a
// change is still seen but the value is never stored twice. Nil gives an
// empty map.
func SealOutputs(outputs map[string]any) map[string]any {
	out := make(map[string]any, len(outputs))
	for k, v := range outputs {
		if v != nil && IsSecretKey(k) {
			out[k] = digest(v)
			continue
		}
		out[k] = seal(v)
	}
	return out
}

func seal(v any) any {
	if IsSecretValue(v) {
		return digest(v.(map[string]any)["value"])
	}
	switch t := v.(type) {
	case map[string]any:
		return SealOutputs(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = seal(x)
		}
		return out
	}
	return v
}

func digest(v any) string {
	sum, err := statestore.Checksum(v)
	if err != nil {
		return "sha256:unknown"
	}
	return sum
}

// ResolveInputs returns the resolved inputs of a component whose input
// dependencies are deps, with outputs(addr) giving each one's current
// outputs (nil when it has none).
func ResolveInputs(deps []string, outputs func(addr string) map[string]any) *statestore.ResolvedInputs {
	in := &statestore.ResolvedInputs{Dependencies: make(map[string]map[string]any, len(deps))}
	for _, d := range deps {
		in.Dependencies[d] = SealOutputs(outputs(d))
	}
	return in
}

// InputsEqual reports whether two recorded inputs name the same
// dependencies with Equal outputs.
func InputsEqual(a, b *statestore.ResolvedInputs) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.Dependencies) != len(b.Dependencies) {
		return false
	}
	for addr, x := range a.Dependencies {
		y, ok := b.Dependencies[addr]
		if !ok || !Equal(map[string]any(x), map[string]any(y)) {
			return false
		}
	}
	return true
}

// InputDiffs compares the inputs a component was last applied with (rec)
// against its dependencies' outputs in state now (cur), for the
// dependencies both name; a dependency added or removed is already a
// (depends_on) diff. Paths are "(inputs).ADDR.KEY".
func InputDiffs(rec, cur *statestore.ResolvedInputs) []FieldDiff {
	d := &differ{}
	for _, addr := range slices.Sorted(maps.Keys(cur.Dependencies)) {
		old, ok := rec.Dependencies[addr]
		if !ok {
			continue
		}
		n := cur.Dependencies[addr]
		if Equal(map[string]any(old), map[string]any(n)) {
			continue
		}
		d.walk(PathInputs+"."+addr, map[string]any(old), map[string]any(n), false)
	}
	return d.out
}

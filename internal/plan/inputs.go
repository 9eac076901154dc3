package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// PathInputs is the pseudo-path of diffs in a component's resolved inputs:
// "(inputs).app/build.sha256" is the sha256 output of app/build as the
// component last saw it (old) and as the state has it now (new).
const PathInputs = "(inputs)"

// InputDeps returns the addresses whose outputs are inputs of a component:
// its depends_on (a ${service/component.key} reference must name a
// depends_on component, docs/kinds.md), never nil (docs/plan.md "Changes
// flow to dependents").
func InputDeps(dependsOn []string) []string {
	if dependsOn == nil {
		return []string{}
	}
	return dependsOn
}

// SealOutputs returns a copy of outputs fit to record as resolved inputs:
// secret values ({secret: true, value: X}, or under a key IsSecretKey
// accepts) become the secret value {secret: true, value: "sha256:<hex>"}
// (digest), so a change is still seen, the value is never stored twice, and
// the digest itself is encrypted in the state under its data key like every
// secret (docs/secrets.md): never a plain digest a short secret could be
// guessed from. Nil gives an empty map.
func SealOutputs(outputs map[string]any) map[string]any {
	return sealer{}.outputs(outputs)
}

// sealer seals outputs, remembering which keys name secrets (nil: no memo).
type sealer map[string]bool

func (s sealer) secretKey(k string) bool {
	if s == nil {
		return IsSecretKey(k)
	}
	v, ok := s[k]
	if !ok {
		v = IsSecretKey(k)
		s[k] = v
	}
	return v
}

func (s sealer) outputs(outputs map[string]any) map[string]any {
	out := make(map[string]any, len(outputs))
	for k, v := range outputs {
		if v != nil && s.secretKey(k) {
			out[k] = digest(v)
			continue
		}
		out[k] = s.value(v)
	}
	return out
}

func (s sealer) value(v any) any {
	if IsSecretValue(v) {
		return digest(v)
	}
	switch t := v.(type) {
	case map[string]any:
		return s.outputs(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = s.value(x)
		}
		return out
	}
	return v
}

// equal reports whether recorded (sealed) outputs equal raw outputs once
// sealed, without building the sealed copy: only secrets are digested.
func (s sealer) equal(rec, raw map[string]any) bool {
	for k, v := range raw {
		r, ok := rec[k]
		if v == nil {
			if ok && r != nil {
				return false
			}
			continue
		}
		if s.secretKey(k) {
			if !sameDigest(r, digest(v)) {
				return false
			}
			continue
		}
		if !s.equalValue(r, v) {
			return false
		}
	}
	for k, r := range rec {
		if _, ok := raw[k]; !ok && r != nil {
			return false
		}
	}
	return true
}

func (s sealer) equalValue(rec, raw any) bool {
	if IsSecretValue(raw) {
		return sameDigest(rec, digest(raw))
	}
	switch t := raw.(type) {
	case map[string]any:
		r, ok := rec.(map[string]any)
		return ok && s.equal(r, t)
	case []any:
		r, ok := rec.([]any)
		if !ok || len(r) != len(t) {
			return false
		}
		for i := range t {
			if !s.equalValue(r[i], t[i]) {
				return false
			}
		}
		return true
	}
	return Equal(rec, raw)
}

// digest is the secret value {secret: true, value: D}, D being "sha256:"
// and the hex SHA-256 of v's encoding (digestText).
func digest(v any) map[string]any {
	return map[string]any{"secret": true, "value": digestText(v)}
}

// digestOf returns the digest text a recorded value holds: the value of a
// secret wrapper, or the plain text recorded before digests were secret.
func digestOf(rec any) (string, bool) {
	if IsSecretValue(rec) {
		rec = rec.(map[string]any)["value"]
	}
	s, ok := rec.(string)
	return s, ok
}

// sameDigest reports whether rec records the digest d.
func sameDigest(rec any, d map[string]any) bool {
	r, ok := digestOf(rec)
	return ok && r == d["value"]
}

// digestText is "sha256:" and the hex SHA-256 of v's encoding: a string
// Go-quoted, anything else as JSON (object keys sorted); a {secret: true,
// value: X} wrapper is digested as X.
func digestText(v any) string {
	if IsSecretValue(v) {
		v = v.(map[string]any)["value"]
	}
	var data []byte
	if str, ok := v.(string); ok {
		data = strconv.AppendQuote(make([]byte, 0, len(str)+2), str)
	} else {
		var err error
		if data, err = json.Marshal(v); err != nil {
			data = []byte(fmt.Sprint(v))
		}
	}
	sum := sha256.Sum256(data)
	var out [7 + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[7:], sum[:])
	return string(out[:])
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
		if !ok || !Equal(plainDigests(x), plainDigests(y)) {
			return false
		}
	}
	return true
}

// plainDigests returns v with every recorded digest as its text, so inputs
// recorded before digests were secret values compare equal to new ones.
func plainDigests(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if IsSecretValue(t) {
			if s, ok := digestOf(t); ok && len(s) == 7+2*sha256.Size && s[:7] == "sha256:" {
				return s
			}
			return t
		}
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = plainDigests(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = plainDigests(x)
		}
		return out
	}
	return v
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
		if Equal(plainDigests(map[string]any(old)), plainDigests(map[string]any(n))) {
			continue
		}
		d.compare(PathInputs+"."+addr, map[string]any(old), map[string]any(n))
	}
	return d.out
}

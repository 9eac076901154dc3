package pulumi

import (
	"encoding/json"
	"strings"

	"github.com/deployer-dev/deployer/internal/jsontree"
)

// Pulumi's secret envelope in an exported deployment: a map whose
// secretSigKey is secretSig, holding "plaintext" (JSON text, with
// --show-secrets) or "ciphertext".
const (
	secretSigKey = "4dabf18193072939515e22adb298388d"
	secretSig    = "1b47061264138c4ac30d75fd1eb44270"
)

// cleanValue returns v as deployer records it in state (docs/pulumi.md,
// "What state holds"): provider internals (keys starting with "__", such as
// a bridged provider's __pulumi_raw_state_delta or __meta) are dropped, and
// every Pulumi secret becomes deployer's own marker {secret: true, value: X},
// which every output masks (plan.Mask) and engines unwrap. v is not changed.
func cleanValue(v any) any {
	return jsontree.Copy(v, func(key string, x any) (any, bool) {
		if strings.HasPrefix(key, "__") {
			return jsontree.Omit, true
		}
		t, ok := x.(map[string]any)
		if !ok || t[secretSigKey] != secretSig {
			return nil, false
		}
		var plain any
		if p, ok := t["plaintext"].(string); ok {
			if err := json.Unmarshal([]byte(p), &plain); err != nil {
				plain = p
			}
		}
		return map[string]any{"secret": true, "value": cleanValue(plain)}, true
	})
}

// cleanMap is cleanValue for a map; nil stays nil.
func cleanMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out, _ := cleanValue(m).(map[string]any)
	return out
}

// componentValue is the component's exported value {outputs, pulumi}
// (Declared.Value, as finished.snapshot gives it), cleaned. When one of its
// outputs is secret the whole value is one secret; it is then opened and
// every leaf equal to, or (a string) containing, a secret value of the
// component's resources is marked secret again, so the other outputs stay
// readable and no secret is left unmarked.
func componentValue(raw any, kids []snapResource) map[string]any {
	v := cleanValue(raw)
	if !isSecretMarker(v) {
		m, _ := v.(map[string]any)
		return m
	}
	var secrets []any
	for _, k := range kids {
		collectSecrets(cleanValue(k.Outputs), &secrets)
	}
	m, _ := remark(v.(map[string]any)["value"], secrets).(map[string]any)
	return m
}

func isSecretMarker(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 2 && m["secret"] == true && hasKey(m, "value")
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// collectSecrets appends the values of every secret marker inside v.
func collectSecrets(v any, out *[]any) {
	if isSecretMarker(v) {
		*out = append(*out, v.(map[string]any)["value"])
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			collectSecrets(x, out)
		}
	case []any:
		for _, x := range t {
			collectSecrets(x, out)
		}
	}
}

// remark marks the leaves of v that equal or contain one of secrets.
func remark(v any, secrets []any) any {
	if isSecretMarker(v) {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = remark(x, secrets)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = remark(x, secrets)
		}
		return out
	}
	for _, s := range secrets {
		if equalJSON(v, s) {
			return map[string]any{"secret": true, "value": v}
		}
		if str, ok := v.(string); ok {
			if sec, ok := s.(string); ok && len(sec) >= 4 && strings.Contains(str, sec) {
				return map[string]any{"secret": true, "value": v}
			}
		}
	}
	return v
}

package plan

import "github.com/deployer-dev/deployer/internal/secrets"

// Masked is what a secret value is shown as in every output.
const Masked = secrets.Masked

// IsSecretKey reports whether a config key names a secret: the rules live
// in internal/secrets (docs/secrets.md).
func IsSecretKey(k string) bool { return secrets.IsSecretKey(k) }

// IsSecretValue reports whether v is a value written as {secret: true,
// value: X} (exactly those two keys).
func IsSecretValue(v any) bool { return secrets.IsSecretValue(v) }

// Mask returns a copy of v safe to print: values written {secret: true,
// value: X}, sealed values (envelopes), and the values of keys IsSecretKey accepts (and everything under
// them), become "(sensitive)" at any depth. Null values stay null. v is not
// changed.
func Mask(v any) any {
	if IsSecretValue(v) || secrets.IsEnvelope(v) {
		return Masked
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if x != nil && IsSecretKey(k) {
				out[k] = Masked
			} else {
				out[k] = Mask(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Mask(x)
		}
		return out
	}
	return v
}

// Unwrap returns a copy of v with every {secret: true, value: X} replaced by
// X, at any depth: the values engines receive. v is not changed.
func Unwrap(v any) any {
	if IsSecretValue(v) {
		return Unwrap(v.(map[string]any)["value"])
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = Unwrap(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Unwrap(x)
		}
		return out
	}
	return v
}

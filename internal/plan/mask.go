package plan

import (
	"github.com/deployer-dev/deployer/internal/jsontree"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

// Masked is what a secret value is shown as in every output.
const Masked = sensitive.Masked

// IsSecretKey reports whether a config key names a secret: the rules live
// in internal/secrets (docs/secrets.md).
func IsSecretKey(k string) bool { return sensitive.IsSecretKey(k) }

// IsSecretValue reports whether v is a value written as {secret: true,
// value: X} (exactly those two keys).
func IsSecretValue(v any) bool { return sensitive.IsSecretValue(v) }

// Mask returns a copy of v safe to print: values written {secret: true,
// value: X}, sealed values (envelopes), and the values of keys IsSecretKey accepts (and everything under
// them), become "(sensitive)" at any depth. Null values stay null. v is not
// changed.
func Mask(v any) any {
	return jsontree.Copy(v, func(key string, x any) (any, bool) {
		if IsSecretValue(x) || sensitive.IsEnvelope(x) || (x != nil && key != "" && IsSecretKey(key)) {
			return Masked, true
		}
		return nil, false
	})
}

// Unwrap returns a copy of v with every {secret: true, value: X} replaced by
// X, at any depth: the values engines receive. v is not changed.
func Unwrap(v any) any {
	return jsontree.Copy(v, func(_ string, x any) (any, bool) {
		if IsSecretValue(x) {
			return Unwrap(x.(map[string]any)["value"]), true
		}
		return nil, false
	})
}

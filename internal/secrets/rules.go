package secrets

import "github.com/deployer-dev/deployer/internal/secrets/sensitive"

// IsSecret reports whether the value v under key k is a secret: a secret
// value or envelope, or a non-null value under a key IsSecretKey accepts.
func IsSecret(k string, v any) bool {
	if v == nil {
		return false
	}
	return sensitive.IsSecretValue(v) || sensitive.IsEnvelope(v) || sensitive.IsSecretKey(k)
}

// Leaves calls fn with every secret value under m, at any depth (the
// value under a secret key, a secret wrapper, an envelope), without
// descending into it.
func Leaves(m map[string]any, fn func(v any)) {
	for k, v := range m {
		if IsSecret(k, v) {
			fn(v)
			continue
		}
		leavesValue(v, fn)
	}
}

func leavesValue(v any, fn func(v any)) {
	if sensitive.IsSecretValue(v) || sensitive.IsEnvelope(v) {
		fn(v)
		return
	}
	switch t := v.(type) {
	case map[string]any:
		Leaves(t, fn)
	case []any:
		for _, x := range t {
			leavesValue(x, fn)
		}
	}
}

// Strings returns the texts inside v (v itself, or every leaf of a map or
// list, secret wrappers unwrapped) as they are printed (sensitive.Texts):
// these are the texts a Masker hides, so a secret of any JSON type is
// masked (docs/secrets.md#what-is-a-secret).
func Strings(v any) []string { return sensitive.Texts(v) }

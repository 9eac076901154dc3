package sensitive

import (
	"encoding/json"
	"strconv"
)

// MinMaskLength is the shortest secret text that is masked in free text or
// makes an equal value elsewhere a secret: shorter values (a "1", a "yes")
// would blank out ordinary output. They are still encrypted in state and
// shown as (sensitive) in plans.
const MinMaskLength = 3

// Texts returns the texts inside v (v itself, or every leaf of a map or
// list, secret wrappers unwrapped) as they are printed: a string as it is,
// a number in its decimal form (87654321, 98765432101, 3.5). These are the
// texts a Masker hides, so a secret of any JSON type is masked. A boolean
// has no text worth hiding (it would blank every "true" in the output): a
// boolean secret is sealed in state and shown as (sensitive) in plans, and
// is not masked in free text (docs/secrets.md#what-is-a-secret).
func Texts(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		if n, ok := numberText(v); ok {
			out = append(out, n)
			return
		}
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case map[string]any:
			if IsSecretValue(t) {
				walk(t["value"])
				return
			}
			for _, x := range t {
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// numberText is v's decimal text when v is a number: a json.Number as
// written, a float64 as Go and JSON print it (87654321, not 8.7654321e+07,
// up to 1e21), an integer in base 10.
func numberText(v any) (string, bool) {
	switch t := v.(type) {
	case json.Number:
		return t.String(), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(t), 'f', -1, 32), true
	case int:
		return strconv.Itoa(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case int32:
		return strconv.FormatInt(int64(t), 10), true
	case uint64:
		return strconv.FormatUint(t, 10), true
	case uint:
		return strconv.FormatUint(uint64(t), 10), true
	}
	return "", false
}

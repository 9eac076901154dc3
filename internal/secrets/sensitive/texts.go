package sensitive

import (
	"encoding/json"
	"slices"
	"strconv"
)

// MinMaskLength is the shortest secret text that is masked in free text or
// makes an equal value elsewhere a secret: shorter values (a "1", a "yes")
// would blank out ordinary output. They are still encrypted in state and
// shown as (sensitive) in plans.
const MinMaskLength = 3

// Texts returns the texts inside v (v itself, or every leaf of a map or
// list, secret wrappers unwrapped) as they are printed: a string as it is,
// a number in every form it can be printed in (numberTexts: 87654321 and
// 8.7654321e+07, 1e+21 and 1000000000000000000000). These are the texts a
// Masker hides, so a secret of any JSON type is masked. A boolean has no
// text worth hiding (it would blank every "true" in the output): a boolean
// secret is sealed in state and shown as (sensitive) in plans, and is not
// masked in free text (docs/secrets.md#what-is-a-secret).
func Texts(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		if n := numberTexts(v); n != nil {
			out = append(out, n...)
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

// numberTexts is every text v prints as when v is a number, nil
// otherwise: an integer in base 10; a float64 (or float32, or a
// json.Number as written and as the float it reads as) as JSON encodes it
// (1e+21, 1.5e-7), as %v and strconv's 'g' print it (1.5e-07), in plain
// decimal ('f': 1000000000000000000000) and in the 'e' and 'E' forms.
func numberTexts(v any) []string {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return []string{t.String()}
		}
		return append([]string{t.String()}, floatTexts(f, 64)...)
	case float64:
		return floatTexts(t, 64)
	case float32:
		return append(floatTexts(float64(t), 32), floatTexts(float64(t), 64)...)
	case int:
		return []string{strconv.Itoa(t)}
	case int64:
		return []string{strconv.FormatInt(t, 10)}
	case int32:
		return []string{strconv.FormatInt(int64(t), 10)}
	case uint64:
		return []string{strconv.FormatUint(t, 10)}
	case uint:
		return []string{strconv.FormatUint(uint64(t), 10)}
	}
	return nil
}

// floatTexts is f's texts at bitSize (32 or 64), each once.
func floatTexts(f float64, bitSize int) []string {
	out := []string{strconv.FormatFloat(f, 'f', -1, bitSize)}
	var n any = f
	if bitSize == 32 {
		n = float32(f)
	}
	if b, err := json.Marshal(n); err == nil {
		out = append(out, string(b))
	}
	for _, format := range []byte{'g', 'e', 'E'} {
		out = append(out, strconv.FormatFloat(f, format, -1, bitSize))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"maps"
	"slices"
)

// WithEncodings returns a new Masker that knows every value m knows and the
// forms a program can compute from it without a key: reversed, hex, and
// base64 (standard and URL alphabets, padded or not) at each of the three
// byte alignments the value may have inside a longer encoded text (the
// characters that depend on the value's bytes alone). It masks what a
// policy makes of its input (docs/secrets.md#policies). The new Masker
// announces nothing.
func (m *Masker) WithEncodings() *Masker {
	out := NewMasker()
	if m == nil {
		return out
	}
	m.mu.RLock()
	values := slices.Collect(maps.Keys(m.values))
	m.mu.RUnlock()
	for _, v := range values {
		out.Add(v, reverse(v), hex.EncodeToString([]byte(v)))
		out.Add(base64Forms(v)...)
	}
	return out
}

// reverse returns s with its runes (and, when s is not UTF-8, its bytes)
// in reverse order.
func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// base64Forms returns, for each alignment k of v after k bytes of a
// longer text, the base64 characters that only v's bytes decide: those
// from the first character after the k bytes to the last one v's bytes
// fill.
func base64Forms(v string) []string {
	var out []string
	for k := range 3 {
		b := append(make([]byte, k), v...)
		from, to := (8*k+5)/6, 8*len(b)/6
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if s := enc.EncodeToString(b); to > from {
				out = append(out, s[from:to])
			}
		}
	}
	return out
}

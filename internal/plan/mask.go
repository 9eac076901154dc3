package plan

import (
	"strings"
	"unicode"
)

// Masked is what a secret value is shown as in every output.
const Masked = "(sensitive)"

// secretSubstrings mark a key as secret wherever they appear in it
// (case-insensitive): db_password, GITHUB_TOKEN, clientSecret.
var secretSubstrings = []string{"password", "passwd", "passphrase", "secret", "token", "credential"}

// secretWords mark a key as secret when they are a whole word of it; words
// are split at '_', '-', '.', ':', '/', ' ' and lower-to-upper case changes: apiKey,
// api_key, KEY, ssh-keys, db_pass, but not monkey or keyspace.
var secretWords = []string{"key", "keys", "apikey", "pass", "pwd"}

// IsSecretKey reports whether a config key names a secret (SPEC 7): it
// contains password, passwd, passphrase, secret, token or credential in any
// case, or one of its words is key, keys, apikey, pass or pwd.
func IsSecretKey(k string) bool {
	lower := strings.ToLower(k)
	for _, s := range secretSubstrings {
		if strings.Contains(lower, s) {
			return true
		}
	}
	for _, w := range words(k) {
		for _, s := range secretWords {
			if w == s {
				return true
			}
		}
	}
	return false
}

// words splits a key into lower-case words at separators and camelCase humps.
func words(k string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(k)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == ':' || r == '/':
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// IsSecretValue reports whether v is a value written as {secret: true,
// value: X} (exactly those two keys).
func IsSecretValue(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 {
		return false
	}
	s, ok := m["secret"].(bool)
	_, hasValue := m["value"]
	return ok && s && hasValue
}

// Mask returns a copy of v safe to print: values written {secret: true,
// value: X}, and the values of keys IsSecretKey accepts (and everything under
// them), become "(sensitive)" at any depth. Null values stay null. v is not
// changed.
func Mask(v any) any {
	if IsSecretValue(v) {
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

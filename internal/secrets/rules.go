package secrets

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// Masked is what a secret value is shown as in plans and state output.
const Masked = "(sensitive)"

// secretSubstrings mark a key as secret wherever they appear in it
// (case-insensitive): db_password, GITHUB_TOKEN, clientSecret.
var secretSubstrings = []string{"password", "passwd", "passphrase", "secret", "token", "credential"}

// secretWords mark a key as secret when they are a whole word of it; words
// are split at '_', '-', '.', ':', '/', ' ' and lower-to-upper case changes: apiKey,
// api_key, KEY, ssh-keys, db_pass, but not monkey or keyspace.
var secretWords = []string{"key", "keys", "apikey", "pass", "pwd"}

// IsSecretKey reports whether a config key names a secret (docs/secrets.md):
// it contains password, passwd, passphrase, secret, token or credential in
// any case, or one of its words is key, keys, apikey, pass or pwd.
func IsSecretKey(k string) bool {
	if v, ok := keyVerdicts.Load(k); ok {
		return v.(bool)
	}
	secret := isSecretKey(k)
	if keyVerdictCount.Add(1) <= maxKeyVerdicts {
		keyVerdicts.Store(k, secret)
	}
	return secret
}

// keyVerdicts caches IsSecretKey by key: a state repeats the same few key
// names in every resource. At most maxKeyVerdicts keys are kept.
var (
	keyVerdicts     sync.Map
	keyVerdictCount atomic.Int64
)

const maxKeyVerdicts = 100_000

func isSecretKey(k string) bool {
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

// Wrap returns v written as a secret value: {secret: true, value: v}. A
// value that already is one is returned as it is.
func Wrap(v any) any {
	if IsSecretValue(v) {
		return v
	}
	return map[string]any{"secret": true, "value": v}
}

// IsSecret reports whether the value v under key k is a secret: a secret
// value or envelope, or a non-null value under a key IsSecretKey accepts.
func IsSecret(k string, v any) bool {
	if v == nil {
		return false
	}
	return IsSecretValue(v) || IsEnvelope(v) || IsSecretKey(k)
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
	if IsSecretValue(v) || IsEnvelope(v) {
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

// Strings returns the strings inside v (v itself, or every string leaf of a
// map or list, secret wrappers unwrapped): the texts a Masker hides.
func Strings(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
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

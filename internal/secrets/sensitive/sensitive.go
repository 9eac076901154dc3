package sensitive

import (
	"slices"
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

// Envelope keys: a secret value is stored, in place of the value, as
// {"deployer:secret": "v1", "provider": P, "key": K, "ciphertext": C}
// (docs/secrets.md). C is base64 of a 12-byte nonce followed by the AES-256-GCM
// seal of the value's JSON.
const (
	EnvelopeMarker  = "deployer:secret"
	EnvelopeVersion = "v1"
)

// IsEnvelope reports whether v is a sealed secret value.
func IsEnvelope(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	mark, ok := m[EnvelopeMarker].(string)
	return ok && mark != ""
}

// ciTokenNames are the CI runner's credentials by exact name: GitHub's
// tokens and the Actions runtime's (docs/secrets.md#what-children-get).
var ciTokenNames = map[string]bool{"GITHUB_TOKEN": true, "GH_TOKEN": true, "GH_ENTERPRISE_TOKEN": true, "GITHUB_ENTERPRISE_TOKEN": true,
	"ACTIONS_RUNTIME_TOKEN": true, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": true}

// IsCIToken reports whether the environment variable name holds a CI
// runner's credential: GITHUB_TOKEN, GH_TOKEN, GH_ENTERPRISE_TOKEN,
// GITHUB_ENTERPRISE_TOKEN, or any ACTIONS_*_TOKEN (ACTIONS_RUNTIME_TOKEN,
// ACTIONS_ID_TOKEN_REQUEST_TOKEN, and those the runner adds later). No child
// process gets them and the Masker knows their values from the start.
func IsCIToken(name string) bool {
	return ciTokenNames[name] || strings.HasPrefix(name, "ACTIONS_") && strings.HasSuffix(name, "_TOKEN")
}

// IsKnownSecretVar reports whether the environment variable name holds a
// secret of the CI environment whose value deployer masks in all its
// output from the first byte (docs/secrets.md#masked-everywhere): a CI
// token (IsCIToken), AWS_SECRET_ACCESS_KEY or AWS_SESSION_TOKEN.
func IsKnownSecretVar(name string) bool {
	return IsCIToken(name) || name == "AWS_SECRET_ACCESS_KEY" || name == "AWS_SESSION_TOKEN"
}

// KnownSecretVarNames lists, sorted, the names IsKnownSecretVar knows
// exactly (every ACTIONS_*_TOKEN the runner sets today among them), for a
// reader that has a getenv but no list of the environment.
func KnownSecretVarNames() []string {
	names := []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}
	for n := range ciTokenNames {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

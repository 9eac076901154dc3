// Package backendurl owns what every backend URL shares, whatever its
// backend: its scheme, and the form of it that messages may print (without
// the password). The backend registry (internal/backends), the backends that
// name their URL in errors and the CLI all use it (docs/backends.md).
package backendurl

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Scheme returns the scheme of a backend URL: "s3" for "s3://bucket",
// "none" for "none", "" when raw has no "://".
func Scheme(raw string) string {
	if raw == "none" {
		return "none"
	}
	s, _, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	return s
}

// Redact returns raw with the password of its user information, and the
// value of a password or sslpassword query parameter, replaced by "xxxxx"
// (net/url's URL.Redacted), for messages, logs and the GitHub
// Actions summary: "postgres://deployer:xxxxx@db:5432/x". A URL without user
// information is returned as written. A URL with user information that does
// not parse is shown as its scheme and "(unparsable URL)", so that a
// password never leaks through a parse error.
func Redact(raw string) string {
	if !strings.Contains(raw, "@") && !strings.Contains(strings.ToLower(raw), "password=") {
		return raw
	}
	s := Scheme(raw)
	if s == "" || strings.ContainsAny(s, "@:/") {
		return "(unparsable URL)"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return s + "://(unparsable URL)"
	}
	u.RawQuery = redactQuery(u.RawQuery)
	return u.Redacted()
}

// redactQuery replaces the values of the query parameters that carry a
// password to the PostgreSQL driver (password, sslpassword) with "xxxxx",
// keeping the order and spelling of the rest.
func redactQuery(q string) string {
	if q == "" {
		return q
	}
	params := strings.Split(q, "&")
	for i, p := range params {
		k, _, _ := strings.Cut(p, "=")
		if name, err := url.QueryUnescape(k); err == nil {
			switch strings.ToLower(name) {
			case "password", "sslpassword":
				params[i] = k + "=xxxxx"
			}
		}
	}
	return strings.Join(params, "&")
}

// FileDir returns the directory of a file:// URL: "file://.deployer" is
// relative to base (the directory of deployer.yaml), "file:///abs"
// absolute. Errors: raw is not file://DIR.
func FileDir(raw, base string) (string, error) {
	rest, ok := strings.CutPrefix(raw, "file://")
	if !ok || rest == "" {
		return "", fmt.Errorf("backend %q: want file://DIR (relative to deployer.yaml) or file:///ABSOLUTE/DIR", raw)
	}
	if u, err := url.PathUnescape(rest); err == nil {
		rest = u
	}
	if !filepath.IsAbs(rest) {
		rest = filepath.Join(base, rest)
	}
	return filepath.Clean(rest), nil
}

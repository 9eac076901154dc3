// Package backends is the backend registry (docs/design.md#package-map): one
// line per URL scheme of deployer.yaml's backend.state and backend.lock,
// giving how to open its lock backend and its state backend, what
// `deployer backend init` sets up, the form errors suggest, and the scheme
// lists config validation uses (Schemes). It is the one place that knows
// every backend package; each backend package owns its URL parsing and its
// setup (docs/backends.md).
package backends

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Options carry settings beyond the URLs.
type Options struct {
	// BaseDir resolves relative file:// paths: the directory of deployer.yaml.
	BaseDir   string
	SSE       string // s3 state: "", AES256, aws:kms
	KMSKeyID  string
	PathStyle bool
	// LockURL is backend.lock: a postgres:// state backend checks the
	// writer's lock row in the same transaction when it equals the state URL.
	LockURL string
	// Writes: the command will write to the backend (deploy, destroy,
	// restore, state push, unlock, lock exec). A backend that must check the
	// server before writing (S3: the conditional-write probe) does it when
	// opened, before the command changes anything. Without it, opening and
	// reading send no write request (docs/design.md#read-only-commands).
	Writes bool
}

// Scheme is one line of the registry: what deployer knows about the
// backends of one URL scheme.
type Scheme struct {
	Name    string   // "s3"; "none" is the whole URL "none"
	Aliases []string // other schemes that open the same backends: "rediss"
	Form    string   // the URL errors suggest: "s3://BUCKET?region=REGION"
	// Lock opens the lock backend of a URL of this scheme; nil when the
	// scheme has none.
	Lock func(ctx context.Context, raw string, o Options) (lockmgr.Backend, error)
	// State opens the state backend; nil when the scheme has none.
	State func(ctx context.Context, raw string, o Options) (statestore.Backend, error)
	// Init sets up, idempotently, what the URLs (state and lock, in that
	// order, without duplicates) name and returns one line per resource:
	// what it created and what already existed.
	Init func(ctx context.Context, urls []string, o Options) ([]string, error)
	// Warning, when set, is printed on stderr by every command whose lock
	// backend is of this scheme.
	Warning string
	// Local: what the URL names lives on this machine only (a CI runner's
	// copy vanishes with the runner).
	Local bool
}

func (s *Scheme) matches(name string) bool {
	return s.Name == name || slices.Contains(s.Aliases, name)
}

// lookup returns the registry line of raw's scheme, or nil. A line whose
// form is not a URL ("none") matches only that exact word.
func lookup(raw string) *Scheme {
	name := backendurl.Scheme(raw)
	for i := range registry {
		s := &registry[i]
		if s.matches(name) && (strings.Contains(s.Form, "://") || raw == s.Form) {
			return s
		}
	}
	return nil
}

// Schemes returns the registry's schemes for config validation
// (config.WithBackends): every scheme that opens a state or a lock backend
// and the forms errors suggest, in registry order.
func Schemes() config.BackendSchemes {
	var s config.BackendSchemes
	add := func(l *config.SchemeList, sc Scheme) {
		l.Names = append(append(l.Names, sc.Name), sc.Aliases...)
		l.Forms = append(l.Forms, sc.Form)
	}
	for _, sc := range registry {
		if sc.State != nil {
			add(&s.State, sc)
		}
		if sc.Lock != nil {
			add(&s.Lock, sc)
		}
	}
	return s
}

// unsupported says which backends there are for role ("state" or "lock").
func unsupported(role, raw string) error {
	l := Schemes().Lock
	if role == "state" {
		l = Schemes().State
	}
	return fmt.Errorf("%s backend %q is not supported: %s", role, backendurl.Redact(raw), l.Suggestion())
}

// OpenLock opens the lock backend of raw (backend.lock). An unknown scheme
// is an error listing the supported ones.
func OpenLock(ctx context.Context, raw string, o Options) (lockmgr.Backend, error) {
	return open(ctx, "lock", raw, o, func(s *Scheme) opener[lockmgr.Backend] { return s.Lock })
}

// OpenState opens the state backend of raw (backend.state). An unknown
// scheme is an error listing the supported ones.
func OpenState(ctx context.Context, raw string, o Options) (statestore.Backend, error) {
	return open(ctx, "state", raw, o, func(s *Scheme) opener[statestore.Backend] { return s.State })
}

// open opens the role backend (lock or state) of raw with the opener pick
// takes from raw's registry line.
func open[B any](ctx context.Context, role, raw string, o Options, pick func(*Scheme) opener[B]) (B, error) {
	var none B
	s := lookup(raw)
	if s == nil || pick(s) == nil {
		return none, unsupported(role, raw)
	}
	b, err := pick(s)(ctx, raw, o)
	if err != nil {
		return none, err // not a typed nil in a non-nil interface
	}
	return b, nil
}

// IsLocal reports whether raw names a backend on this machine only
// (file://), which a CI runner loses when it ends.
func IsLocal(raw string) bool {
	s := lookup(raw)
	return s != nil && s.Local
}

// LockWarning is the line every command prints on stderr for the lock
// backend raw, or "" (locking off: docs/self-hosted.md#locking-off-lock-none).
func LockWarning(raw string) string {
	if s := lookup(raw); s != nil {
		return s.Warning
	}
	return ""
}

// Init prepares the backends of the two URLs (`deployer backend init`):
// each scheme's Init gets the URLs of its scheme, state first, once each,
// in the order the schemes first appear. It returns one line per resource,
// what it created and what already existed, and stops at the first error
// with the lines so far. Idempotent.
func Init(ctx context.Context, stateURL, lockURL string, o Options) ([]string, error) {
	var order []*Scheme
	urls := map[*Scheme][]string{}
	for _, u := range []string{stateURL, lockURL} {
		s := lookup(u)
		if s == nil {
			return nil, fmt.Errorf("backend %q is not supported", backendurl.Redact(u))
		}
		if _, seen := urls[s]; !seen {
			order = append(order, s)
		}
		if !slices.Contains(urls[s], u) {
			urls[s] = append(urls[s], u)
		}
	}
	var lines []string
	for _, s := range order {
		l, err := s.Init(ctx, urls[s], o)
		lines = append(lines, l...)
		if err != nil {
			return lines, err
		}
	}
	return lines, nil
}

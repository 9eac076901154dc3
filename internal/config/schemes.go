package config

import "strings"

// BackendSchemes are the backend URL schemes deployer can open, state and
// lock, as the backend registry lists them (internal/backends.Schemes,
// docs/backends.md). config may not import the registry
// (docs/design.md#package-map), so the CLI passes them in with
// WithBackends; without them Load, Parse and ApplyEnv check only the form
// of backend.state and backend.lock, and opening the backend refuses an
// unknown scheme.
type BackendSchemes struct {
	State, Lock SchemeList
}

// SchemeList is the backends of one role (state or lock).
type SchemeList struct {
	// Names is every scheme that opens one: "file", "s3", "postgres",
	// "postgresql". "none" stands for the URL "none" (locking off).
	Names []string
	// Forms is what errors suggest, in order: "file://DIR",
	// "s3://BUCKET?region=REGION", "none".
	Forms []string
}

// Suggestion renders Forms as "use A, B or C" for errors; "see
// docs/backends.md" without them.
func (s SchemeList) Suggestion() string {
	switch n := len(s.Forms); n {
	case 0:
		return "see docs/backends.md"
	case 1:
		return "use " + s.Forms[0]
	default:
		return "use " + strings.Join(s.Forms[:n-1], ", ") + " or " + s.Forms[n-1]
	}
}

// Option changes how Load, Parse and ApplyEnv check a configuration.
type Option func(*loader)

// WithKinds checks each component's kind against kinds, the engines' kind
// catalogs as the engine registry lists them (internal/engines.Kinds).
// config may not import the registry, so the CLI passes them in; without
// them any kind passes here and deploy refuses a kind no engine applies.
func WithKinds(kinds []string) Option {
	return func(l *loader) { l.kinds = kinds }
}

// WithBackends checks backend.state and backend.lock (and
// DEPLOYER_BACKEND_STATE / DEPLOYER_BACKEND_LOCK) against s.
func WithBackends(s BackendSchemes) Option {
	return func(l *loader) { l.backends = s }
}

package config

import "time"

// Config is deployer.yaml (docs/configuration.md) after defaults, before an environment is chosen.
// It is filled by Parse from the YAML node tree, one section at a time
// (sections.go): that is the one schema, with every key's checks and line
// numbers. The fields carry no yaml tags because nothing decodes through them.
type Config struct {
	// Path is the file the config was read from; Dir its directory (Command
	// components run there; relative file:// URLs resolve against it).
	Path string
	Dir  string

	Stack   string
	Backend Backend
	Pulumi  Pulumi
	// Parallelism bounds how many independent components deploy and destroy
	// apply at once (docs/configuration.md); default DefaultParallelism.
	Parallelism  int
	Metrics      Metrics
	Environments map[string]*Environment
	Services     map[string]*Service
	// Shared lists resources several applications share, for `deployer
	// guard` (docs/guard.md).
	Shared map[string]*Shared
}

// Backend selects where state and locks live and the lease timings.
type Backend struct {
	State             string        // file://.deployer | s3://bucket | postgres://...
	Lock              string        // file://.deployer | dynamodb://table | s3://bucket | redis://... | postgres://... | none
	LockTTL           time.Duration // default 1h (docs/locking.md#lifetime)
	HeartbeatInterval time.Duration // default 30s
	StaleAfter        time.Duration // default 2m
	// MaxClockSkew: refuse to hold a lease when the lock backend's clock is
	// further off than this (docs/locking.md, "Clocks"); default 30s.
	MaxClockSkew time.Duration
	// S3/DynamoDB options (docs/aws.md): server-side encryption and path-style addressing.
	SSE       string // "", AES256, aws:kms
	KMSKeyID  string // with sse: aws:kms
	PathStyle bool   // MinIO
	// MaxStateSize is the largest state document loaded or saved, in bytes
	// (0: the state store's default, 64 MiB).
	MaxStateSize int64
}

// Pulumi configures the Pulumi engine (docs/pulumi.md).
type Pulumi struct {
	SecretsProvider string // passphrase | awskms://...
	Command         string // path to the pulumi CLI; default: PATH
}

// Metrics configures metric export (docs/observability.md). OTLP export is
// configured by the standard OTEL_EXPORTER_OTLP_* variables instead.
type Metrics struct {
	// EMF is the file CloudWatch Embedded Metric Format lines are appended
	// to (DEPLOYER_METRICS_EMF overrides); relative to deployer.yaml's
	// directory; "" writes none.
	EMF string
}

// Environment holds per-environment stack config (Pulumi stack config, and
// the "config" every component sees).
type Environment struct {
	Config map[string]any
}

// Service is a group of components.
type Service struct {
	Components map[string]*Component
}

// Component is one deployable unit, addressed "service/component".
type Component struct {
	Kind      string
	DependsOn []string // "name" (same service) or "service/name"
	Config    map[string]any
	// Environments holds per-environment overrides deep-merged into Config.
	Environments map[string]map[string]any
	// Secrets lists config paths ("db.password") whose values are masked.
	Secrets []string
	Command *CommandSpec // kind Command only
}

// CommandSpec are the shell commands of a Command component (docs/command-kind.md), run with
// sh -c in Config.Dir.
type CommandSpec struct {
	Create string
	Update string
	Delete string
	// Read prints the component's live state as one JSON object on stdout
	// (optional; plan --refresh compares it with what the last apply
	// recorded: docs/command-kind.md#drift-read).
	Read    string
	Timeout time.Duration // default 10m
}

// Fields returns the commands as the map a plan diffs and a state records
// under the component ("command.update" in a diff, docs/plan.md#diff-rules):
// create, update, delete and read as written (empty ones left out) and timeout as
// a Go duration ("2m0s"; left out when it is the default). Nil for a nil spec.
func (c *CommandSpec) Fields() map[string]any {
	if c == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range map[string]string{"create": c.Create, "update": c.Update, "delete": c.Delete, "read": c.Read} {
		if v != "" {
			out[k] = v
		}
	}
	if c.Timeout > 0 && c.Timeout != DefaultCommandTimeout {
		out["timeout"] = c.Timeout.String()
	}
	return out
}

// section returns the kind-specific section name of c as a map ("command":
// Fields), nil when c has none.
func (c *Component) section(name string) map[string]any {
	if name == "command" {
		return c.Command.Fields()
	}
	return nil
}

// CommandSpecFrom is the inverse of Fields, for commands recorded in a
// state: unknown keys and values that are not strings are ignored; nil when
// m is nil.
func CommandSpecFrom(m map[string]any) *CommandSpec {
	if m == nil {
		return nil
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	spec := &CommandSpec{Create: str("create"), Update: str("update"), Delete: str("delete"), Read: str("read")}
	if d, err := time.ParseDuration(str("timeout")); err == nil {
		spec.Timeout = d
	}
	return spec
}

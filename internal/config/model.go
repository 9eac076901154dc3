package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// Config is deployer.yaml (docs/configuration.md) after defaults, before an environment is chosen.
// These structs are the one schema of the file: a field's yaml tag is its
// key, and Parse decodes the YAML node tree through them with line numbers
// for every problem (decode.go has the check, names and keys tags).
// Keys are listed in errors ("allowed: ...") in field order.
type Config struct {
	// Path is the file the config was read from; Dir its directory (Command
	// components run there; relative file:// URLs resolve against it).
	Path string
	Dir  string

	Stack   string  `yaml:"stack" check:"name"`
	Backend Backend `yaml:"backend"`
	Pulumi  Pulumi  `yaml:"pulumi"`
	// Parallelism bounds how many independent components deploy and destroy
	// apply at once (docs/configuration.md); default DefaultParallelism.
	Parallelism  int                     `yaml:"parallelism" check:"parallelism"`
	Environments map[string]*Environment `yaml:"environments" names:"environment"`
	Services     map[string]*Service     `yaml:"services" names:"service"`
	// Shared lists resources several applications share, for `deployer
	// guard` (docs/guard.md).
	Shared  map[string]*Shared `yaml:"shared" names:"shared resource"`
	Metrics Metrics            `yaml:"metrics"`
	// Policy names the Rego policies every plan is checked against
	// (docs/policy.md).
	Policy Policy `yaml:"policy"`
	// Moved lists the components and services renamed in this file: their
	// state entries move to the new address instead of being deleted and
	// created (docs/operations.md#moves).
	Moved []Move `yaml:"moved"`
	// Outputs names the stack's own outputs (docs/operations.md#stack-outputs):
	// NAME: "${SERVICE/COMPONENT.KEY[.SUB...]}", a component's output.
	// They fill the state's top-level outputs at every deploy.
	Outputs map[string]string `yaml:"outputs" keys:"output"`
}

// Policy configures policy checks on plans (docs/policy.md).
type Policy struct {
	// Paths are directories of .rego files, relative to deployer.yaml's
	// directory; --policy DIR adds to them.
	Paths []string `yaml:"paths"`
}

// Backend selects where state and locks live and the lease timings.
type Backend struct {
	State             string        `yaml:"state" check:"state-url"` // file://.deployer | s3://bucket | postgres://...
	Lock              string        `yaml:"lock" check:"lock-url"`   // file://.deployer | dynamodb://table | s3://bucket | redis://... | postgres://... | none
	LockTTL           time.Duration `yaml:"lock_ttl"`                // default 1h (docs/locking.md#lifetime)
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"`      // default 30s
	StaleAfter        time.Duration `yaml:"stale_after"`             // default 2m
	// MaxClockSkew: refuse to hold a lease when the lock backend's clock is
	// further off than this (docs/locking.md, "Clocks"); default 30s.
	MaxClockSkew time.Duration `yaml:"max_clock_skew"`
	// S3/DynamoDB options (docs/aws.md): server-side encryption and path-style addressing.
	SSE       string `yaml:"sse" check:"sse"` // "", AES256, aws:kms
	KMSKeyID  string `yaml:"kms_key_id"`      // with sse: aws:kms
	PathStyle bool   `yaml:"path_style"`      // MinIO
	// MaxStateSize is the largest state document loaded or saved, in bytes
	// (0: the state store's default, 64 MiB).
	MaxStateSize int64 `yaml:"max_state_size" check:"size"`
}

// Pulumi configures the Pulumi engine (docs/pulumi.md).
type Pulumi struct {
	SecretsProvider string `yaml:"secrets_provider"` // passphrase | awskms://...
	Command         string `yaml:"command"`          // path to the pulumi CLI; default: PATH
}

// Metrics configures metric export (docs/observability.md). OTLP export is
// configured by the standard OTEL_EXPORTER_OTLP_* variables instead.
type Metrics struct {
	// EMF is the file CloudWatch Embedded Metric Format lines are appended
	// to (DEPLOYER_METRICS_EMF overrides); relative to deployer.yaml's
	// directory; "" writes none.
	EMF string `yaml:"emf"`
}

// Environment holds per-environment stack config (Pulumi stack config, and
// the "config" every component sees).
type Environment struct {
	Config map[string]any `yaml:"config"`
}

// Service is a group of components.
type Service struct {
	Components map[string]*Component `yaml:"components" names:"component"`
}

// Component is one deployable unit, addressed "service/component".
type Component struct {
	Kind      string         `yaml:"kind"`
	DependsOn []string       `yaml:"depends_on"` // "name" (same service) or "service/name"
	Config    map[string]any `yaml:"config"`
	// Environments holds per-environment overrides deep-merged into Config.
	Environments map[string]map[string]any `yaml:"environments" keys:"environment"`
	// Secrets lists config paths ("db.password") whose values are masked.
	Secrets []string `yaml:"secrets"`
	// Protect refuses any plan that would delete or replace the component
	// (docs/configuration.md#protect); recorded in its state entry so that
	// it holds after the component leaves deployer.yaml.
	Protect bool `yaml:"protect"`
	// Import adopts an instance that exists outside deployer instead of
	// creating one (docs/operations.md#import); nil when not written.
	Import *Import `yaml:"import"`
	// Sections are the kind's own sections as written in deployer.yaml
	// ("command"), by key, with their lines: config does not read them; the
	// engine that declares the kind decodes and checks them (Kind.Decode).
	Sections map[string]*yaml.Node `yaml:"*"`
	// Settings are Sections as the kind's engine decoded them, by section
	// key: what a plan diffs under "SECTION.KEY" (docs/plan.md#diff-rules),
	// a saved plan binds and the engine applies. Nil when the component
	// has no sections.
	Settings map[string]map[string]any
}

// Import is a component's import: block (docs/operations.md#import): the
// id of the existing instance the component adopts. Once the component is
// in the state with that id, the block changes nothing.
type Import struct {
	ID string `yaml:"id"`
}

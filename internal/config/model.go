package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

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
	// Sections are the kind's own sections as written in deployer.yaml
	// ("command"), by key, with their lines: config does not read them; the
	// engine that declares the kind decodes and checks them (Kind.Decode).
	Sections map[string]*yaml.Node
	// Settings are Sections as the kind's engine decoded them, by section
	// key: what a plan diffs under "SECTION.KEY" (docs/plan.md#diff-rules),
	// a saved plan binds and the engine applies. Nil when the component
	// has no sections.
	Settings map[string]map[string]any
}

package config

import "time"

// Config is deployer.yaml (docs/configuration.md) after defaults, before an environment is chosen.
type Config struct {
	// Path is the file the config was read from; Dir its directory (Command
	// components run there; relative file:// URLs resolve against it).
	Path string `yaml:"-"`
	Dir  string `yaml:"-"`

	Stack   string  `yaml:"stack"`
	Backend Backend `yaml:"backend"`
	Pulumi  Pulumi  `yaml:"pulumi"`
	// Parallelism bounds how many independent components deploy and destroy
	// apply at once (docs/configuration.md); default DefaultParallelism.
	Parallelism  int                     `yaml:"parallelism"`
	Metrics      Metrics                 `yaml:"metrics"`
	Environments map[string]*Environment `yaml:"environments"`
	Services     map[string]*Service     `yaml:"services"`
	// Shared lists resources several applications share, for `deployer
	// guard` (docs/guard.md).
	Shared map[string]*Shared `yaml:"shared"`
}

// Backend selects where state and locks live and the lease timings.
type Backend struct {
	State             string        `yaml:"state"`              // file://.deployer | s3://bucket | postgres://...
	Lock              string        `yaml:"lock"`               // file://.deployer | dynamodb://table | s3://bucket | redis://... | postgres://... | none
	LockTTL           time.Duration `yaml:"lock_ttl"`           // default 1h (docs/locking.md#lifetime)
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"` // default 30s
	StaleAfter        time.Duration `yaml:"stale_after"`        // default 2m
	// MaxClockSkew: refuse to hold a lease when the lock backend's clock is
	// further off than this (docs/locking.md, "Clocks"); default 30s.
	MaxClockSkew time.Duration `yaml:"max_clock_skew"`
	// S3/DynamoDB options (docs/aws.md): server-side encryption and path-style addressing.
	SSE       string `yaml:"sse"`        // "", AES256, aws:kms
	KMSKeyID  string `yaml:"kms_key_id"` // with sse: aws:kms
	PathStyle bool   `yaml:"path_style"` // MinIO
	// MaxStateSize is the largest state document loaded or saved, in bytes
	// (0: the state store's default, 64 MiB).
	MaxStateSize int64 `yaml:"max_state_size"`
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
	Components map[string]*Component `yaml:"components"`
}

// Component is one deployable unit, addressed "service/component".
type Component struct {
	Kind      string         `yaml:"kind"`
	DependsOn []string       `yaml:"depends_on"` // "name" (same service) or "service/name"
	Config    map[string]any `yaml:"config"`
	// Environments holds per-environment overrides deep-merged into Config.
	Environments map[string]map[string]any `yaml:"environments"`
	// Secrets lists config paths ("db.password") whose values are masked.
	Secrets []string     `yaml:"secrets"`
	Command *CommandSpec `yaml:"command"` // kind Command only
}

// CommandSpec are the shell commands of a Command component (docs/command-kind.md), run with
// sh -c in Config.Dir.
type CommandSpec struct {
	Create  string        `yaml:"create"`
	Update  string        `yaml:"update"`
	Delete  string        `yaml:"delete"`
	Timeout time.Duration `yaml:"timeout"` // default 10m
}

package command

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
)

// Section is the component key of deployer.yaml that holds a Command
// component's commands, and the prefix of their paths in a plan's diffs
// ("command.update", docs/plan.md#diff-rules).
const Section = "command"

// Spec are the shell commands of a Command component (docs/command-kind.md),
// run with sh -c in the directory of deployer.yaml. The yaml tags are the
// keys of the command section.
type Spec struct {
	Create string `yaml:"create"`
	Update string `yaml:"update"`
	Delete string `yaml:"delete"`
	// Read prints the component's live state as one JSON object on stdout
	// (optional; plan --refresh compares it with what the last apply
	// recorded: docs/command-kind.md#drift-read).
	Read string `yaml:"read"`
	// Timeout bounds each command; 0 is the engine's default (DefaultTimeout).
	Timeout time.Duration `yaml:"timeout"`
	// Grace is the time a command has between SIGTERM and SIGKILL when it
	// is cancelled or times out; 0 is the engine's (deploy --grace,
	// docs/command-kind.md#failure-timeout-and-cancellation). At most
	// MaxGrace.
	Grace time.Duration `yaml:"grace"`
	// Triggers are values whose change replaces the component: the
	// recorded delete runs, then create (docs/command-kind.md#replace).
	Triggers []string `yaml:"triggers"`
}

// MaxGrace bounds command.grace and deploy --grace: a cancelled deploy
// holds its lock while a command cleans up.
const MaxGrace = 10 * time.Minute

// Fields returns the commands as the settings a plan diffs under "command"
// and the state records (actual_state.commands, docs/state-format.md):
// create, update, delete and read as written (empty ones left out) and
// timeout as a Go duration ("2m0s"; left out when it is the default),
// grace likewise (left out when not set),
// triggers as a list (left out when empty). Nil for a nil spec.
func (c *Spec) Fields() map[string]any {
	if c == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range map[string]string{"create": c.Create, "update": c.Update, "delete": c.Delete, "read": c.Read} {
		if v != "" {
			out[k] = v
		}
	}
	if c.Timeout > 0 && c.Timeout != DefaultTimeout {
		out["timeout"] = c.Timeout.String()
	}
	if c.Grace > 0 {
		out["grace"] = c.Grace.String()
	}
	if len(c.Triggers) > 0 {
		triggers := make([]any, len(c.Triggers))
		for i, v := range c.Triggers {
			triggers[i] = v
		}
		out["triggers"] = triggers
	}
	return out
}

// SpecFrom is the inverse of Fields for the commands, for settings from a
// plan step or a state: triggers (never run), unknown keys and values that
// are not strings are ignored; nil when m is nil.
func SpecFrom(m map[string]any) *Spec {
	if m == nil {
		return nil
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	spec := &Spec{Create: str("create"), Update: str("update"), Delete: str("delete"), Read: str("read")}
	if d, err := time.ParseDuration(str("timeout")); err == nil && d > 0 {
		spec.Timeout = d
	}
	if d, err := time.ParseDuration(str("grace")); err == nil && d > 0 {
		spec.Grace = d
	}
	return spec
}

// stepSpec is the commands of step st (for a delete: the ones its state
// recorded, or with destroy the configured ones); empty when it has none.
func stepSpec(st plan.Step) *Spec {
	if spec := SpecFrom(st.Settings[Section]); spec != nil {
		return spec
	}
	return &Spec{}
}

// decode reads the command section of a component (config.Kind.Decode)
// into a Spec: the commands are strings, timeout a positive duration,
// grace a positive duration of at most MaxGrace.
func decode(s *config.Section) map[string]any {
	spec := &Spec{}
	s.Decode(spec)
	if spec.Grace > MaxGrace {
		v := valueOf(s.Node, "grace")
		s.Errorf(v, "grace", "duration %q is over the %s maximum (a cancelled deploy holds its lock while the command cleans up)", v.Value, MaxGrace)
		spec.Grace = 0
	}
	return spec.Fields()
}

// valueOf is the value node of key in the mapping n (n itself when absent).
func valueOf(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return n
}

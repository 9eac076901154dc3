package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Binding is what a saved plan binds besides the state's lineage and serial
// (docs/plan.md "Saved plans"): everything that decides what the apply
// does, as the plan resolved it. Secret values appear only as keyed digests
// (DigestKey), never in plain text.
type Binding struct {
	// DeployerVersion is the version of the deployer that made the plan.
	DeployerVersion string `json:"deployer_version"`
	// Digest is how secret values were digested: "hmac-sha256" (DigestHMAC),
	// keyed by a key derived from the state's data key or, when the state
	// had none, from the plan's own (Secrets). Files of older deployers may
	// say "sha256" (unkeyed): they are refused.
	Digest string `json:"digest"`
	// Secrets is the plan's own data key, made when the state had none
	// and the plan binds secret values, wrapped by the secrets provider
	// exactly as a state's data key is (docs/secrets.md); nil when the
	// digests are keyed by the state's data key or there are none.
	Secrets *statestore.SecretsInfo `json:"secrets,omitempty"`
	// EnvironmentConfig is environments.{env}.config as resolved.
	EnvironmentConfig map[string]any `json:"environment_config,omitempty"`
	// Components are the components in the plan's scope, by address.
	Components map[string]BoundComponent `json:"components"`
	// PolicyDigest is the digest of the policy files the plan was checked
	// against (policy.Set.Digest; docs/policy.md#saved-plans); "" when none.
	PolicyDigest string `json:"policy_digest,omitempty"`
}

// BoundComponent is one component as the plan resolved it.
type BoundComponent struct {
	Kind      string         `json:"kind"`
	DependsOn []string       `json:"depends_on,omitempty"`
	Config    map[string]any `json:"config"`
	// Settings are the kind's own settings (config.ResolvedComponent.Settings),
	// each bound under its section's key beside kind and config ("command").
	Settings map[string]map[string]any `json:"-"`
	// Read are the outputs a data component (StackReference) read.
	Read map[string]any `json:"read,omitempty"`
	// Import is the id of its import: block (docs/operations.md#import);
	// "" without one.
	Import string `json:"import,omitempty"`
}

// boundKeys are the keys of a BoundComponent's JSON that are not settings.
var boundKeys = []string{"kind", "depends_on", "config", "import", "read"}

// MarshalJSON writes kind, depends_on, config, import, each settings
// section (by key) and read, in that order.
func (b BoundComponent) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	field := func(key string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(data)
		return nil
	}
	if err := field("kind", b.Kind); err != nil {
		return nil, err
	}
	if len(b.DependsOn) > 0 {
		if err := field("depends_on", b.DependsOn); err != nil {
			return nil, err
		}
	}
	if err := field("config", b.Config); err != nil {
		return nil, err
	}
	if b.Import != "" {
		if err := field("import", b.Import); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.Settings)) {
		if slices.Contains(boundKeys, name) {
			return nil, fmt.Errorf("settings section %q clashes with a key of the binding", name)
		}
		if len(b.Settings[name]) > 0 {
			if err := field(name, b.Settings[name]); err != nil {
				return nil, err
			}
		}
	}
	if len(b.Read) > 0 {
		if err := field("read", b.Read); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes: every key besides kind,
// depends_on, config and read is a settings section. Numbers are kept
// exactly (json.Number).
func (b *BoundComponent) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := decodeExact(data, &raw); err != nil {
		return err
	}
	*b = BoundComponent{}
	for key, v := range raw {
		var err error
		switch key {
		case "kind":
			err = decodeExact(v, &b.Kind)
		case "depends_on":
			err = decodeExact(v, &b.DependsOn)
		case "config":
			err = decodeExact(v, &b.Config)
		case "read":
			err = decodeExact(v, &b.Read)
		case "import":
			err = decodeExact(v, &b.Import)
		default:
			var m map[string]any
			if err = decodeExact(v, &m); err == nil && m != nil {
				if b.Settings == nil {
					b.Settings = map[string]map[string]any{}
				}
				b.Settings[key] = m
			}
		}
		if err != nil {
			return fmt.Errorf("binding %s: %w", key, err)
		}
	}
	return nil
}

// decodeExact decodes JSON data into v with numbers as json.Number.
func decodeExact(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// DigestKey is the key of a digested secret value in a Binding:
// {"deployer:digest": "hmac-sha256:<hex>"}.
const DigestKey = "deployer:digest"

// DigestHMAC is the Digest of a Binding whose secret values are digested
// as "hmac-sha256:<hex>", HMAC-SHA256 under a digest key of the value's
// place (the component's address and the field's path) and its JSON, so
// equal secrets in two fields have unrelated digests. Files whose digest
// is "hmac-sha256" (DigestHMACUnplaced, digests of the value alone) are
// refused: make the plan again.
const DigestHMAC = "hmac-sha256-placed"

// DigestHMACUnplaced is the Digest of saved plans of older deployers,
// whose digests were of the value alone: they are refused.
const DigestHMACUnplaced = "hmac-sha256"

// Digester digests one secret value (its JSON, at place: "ADDRESS
// config.PATH", "environment config.PATH", "ADDRESS read.PATH") for a
// Binding, returning "hmac-sha256:<hex>".
type Digester func(place string, data []byte) string

// Bind returns the Binding of res in scope, with read the outputs of data
// components read for the plan (Options.Read) and version the deployer's.
// Secret values (marked {secret: true, value: X}, under a key that names a
// secret, or at a path listed in the component's secrets:) become
// {"deployer:digest": dig(JSON of the value)}.
func Bind(res *config.Resolved, scope string, read map[string]map[string]any, version, digestName string, dig Digester) *Binding {
	b := &Binding{DeployerVersion: version, Digest: digestName, Components: map[string]BoundComponent{}}
	if len(res.EnvConfig) > 0 {
		b.EnvironmentConfig, _ = digestSecrets(res.EnvConfig, "", nil, false, placed("environment config", dig)).(map[string]any)
	}
	for addr, c := range res.Components {
		if !InScope(addr, scope) {
			continue
		}
		bc := BoundComponent{Kind: c.Kind, DependsOn: slices.Clone(c.DependsOn), Settings: c.Settings, Import: c.ImportID}
		bc.Config, _ = digestSecrets(c.Config, "", c.Secrets, false, placed(addr+" config", dig)).(map[string]any)
		if bc.Config == nil {
			bc.Config = map[string]any{}
		}
		if r, ok := read[addr]; ok {
			bc.Read, _ = digestSecrets(r, "", nil, false, placed(addr+" read", dig)).(map[string]any)
		}
		b.Components[addr] = bc
	}
	return b
}

// placed returns dig for the values of one tree, its place prefixed by
// where.
func placed(where string, dig Digester) func(path string, data []byte) string {
	return func(path string, data []byte) string { return dig(where+"."+path, data) }
}

// digestSecrets copies v with every secret value digested by dig(path, JSON).
func digestSecrets(v any, path string, secretPaths []string, secret bool, dig func(path string, data []byte) string) any {
	if !secret {
		for _, p := range secretPaths {
			if underPath(path, p) {
				secret = true
				break
			}
		}
	}
	if IsSecretValue(v) {
		v, secret = v.(map[string]any)["value"], true
	}
	if secret && v != nil {
		data, err := json.Marshal(v)
		if err != nil {
			data = []byte(fmt.Sprint(v))
		}
		return map[string]any{DigestKey: dig(path, data)}
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = digestSecrets(x, joinPath(path, k), secretPaths, IsSecretKey(k), dig)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = digestSecrets(x, path+"["+strconv.Itoa(i)+"]", secretPaths, false, dig)
		}
		return out
	}
	return v
}

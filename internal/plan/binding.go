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

// BindingDiff is the first difference between what a saved plan bound and
// what the configuration, the references and deployer give now.
type BindingDiff struct {
	// Path is where: "deployer version", "environments.dev.config.region",
	// "services.web.components.site.config.image",
	// "services.web.components.site.command.update",
	// "services.up.components.base.(outputs).outputs.base/pet.id".
	Path string
	// Planned and Now are the values rendered for a message ("(absent)"
	// when missing, "(sensitive)" for secrets).
	Planned, Now string
	Sensitive    bool
}

func (d *BindingDiff) String() string {
	return fmt.Sprintf("%s: planned %s, now %s", d.Path, d.Planned, d.Now)
}

// CompareBinding returns the first difference between saved and now, in a
// fixed order (version, environment config, then components by address:
// presence, kind, depends_on, config, the kind's settings by section, read
// outputs), or nil when they bind the same apply. env names the environment
// in paths.
func CompareBinding(saved, now *Binding, env string) *BindingDiff {
	if saved.DeployerVersion != now.DeployerVersion {
		return &BindingDiff{Path: "deployer version", Planned: strconv.Quote(saved.DeployerVersion), Now: strconv.Quote(now.DeployerVersion)}
	}
	if d := firstDiff("environments."+env+".config", saved.EnvironmentConfig, now.EnvironmentConfig); d != nil {
		return d
	}
	addrs := slices.Sorted(maps.Keys(saved.Components))
	for a := range now.Components {
		if _, ok := saved.Components[a]; !ok {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	for _, addr := range addrs {
		svc, comp := config.SplitAddress(addr)
		base := "services." + svc + ".components." + comp
		s, inSaved := saved.Components[addr]
		n, inNow := now.Components[addr]
		if !inSaved || !inNow {
			d := &BindingDiff{Path: base, Planned: "(absent)", Now: "(absent)"}
			if inSaved {
				d.Planned = "(present)"
			} else {
				d.Now = "(present)"
			}
			return d
		}
		if s.Kind != n.Kind {
			return &BindingDiff{Path: base + ".kind", Planned: strconv.Quote(s.Kind), Now: strconv.Quote(n.Kind)}
		}
		if !slices.Equal(s.DependsOn, n.DependsOn) {
			return &BindingDiff{Path: base + ".depends_on", Planned: render(toAny(s.DependsOn)), Now: render(toAny(n.DependsOn))}
		}
		if s.Import != n.Import {
			return &BindingDiff{Path: base + ".import.id", Planned: quoteOrAbsent(s.Import), Now: quoteOrAbsent(n.Import)}
		}
		type part struct {
			path string
			a, b map[string]any
		}
		parts := []part{{base + ".config", s.Config, n.Config}}
		for _, name := range sectionNames(s.Settings, n.Settings) {
			parts = append(parts, part{base + "." + name, s.Settings[name], n.Settings[name]})
		}
		parts = append(parts, part{base + "." + PathOutputs, s.Read, n.Read})
		for _, part := range parts {
			if d := firstDiff(part.path, part.a, part.b); d != nil {
				return d
			}
		}
	}
	return nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// firstDiff walks two bound trees (maps by sorted key, lists by index) and
// returns the first leaf that differs; a digested secret compares by digest
// and renders as (sensitive).
func firstDiff(path string, a, b any) *BindingDiff {
	if isDigest(a) || isDigest(b) {
		if Equal(a, b) {
			return nil
		}
		if a == nil || b == nil {
			return &BindingDiff{Path: path, Planned: orAbsent(a, Masked), Now: orAbsent(b, Masked), Sensitive: true}
		}
		return &BindingDiff{Path: path, Planned: Masked, Now: Masked, Sensitive: true}
	}
	am, aMap := a.(map[string]any)
	bm, bMap := b.(map[string]any)
	if (aMap || a == nil) && (bMap || b == nil) && (aMap || bMap) {
		for c := range mapChildren(path, am, bm) {
			if d := firstDiff(c.path, c.a, c.b); d != nil {
				return d
			}
		}
		return nil
	}
	al, aList := a.([]any)
	bl, bList := b.([]any)
	if aList && bList {
		for c := range listChildren(path, al, bl) {
			if d := firstDiff(c.path, c.a, c.b); d != nil {
				return d
			}
		}
		return nil
	}
	if Equal(a, b) {
		return nil
	}
	return &BindingDiff{Path: path, Planned: orAbsent(a, ""), Now: orAbsent(b, "")}
}

func isDigest(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	_, ok = m[DigestKey].(string)
	return ok
}

// quoteOrAbsent renders an id: quoted, or (absent) when "".
func quoteOrAbsent(id string) string {
	if id == "" {
		return "(absent)"
	}
	return strconv.Quote(id)
}

// orAbsent renders v, "(absent)" when nil; masked replaces a present value.
func orAbsent(v any, masked string) string {
	switch {
	case v == nil:
		return "(absent)"
	case masked != "":
		return masked
	}
	return render(v)
}

// render is a value as messages show it: strings quoted, the rest JSON.
func render(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

package pulumi

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/deployer-dev/deployer/internal/plan"
)

// get returns the value at a dotted path of cfg, or nil. Secret wrappers
// {secret: true, value: X} on the way are unwrapped: the kinds read plain
// values and mark secrets themselves (isSecretAt).
func get(cfg map[string]any, path string) any {
	v, _ := lookup(cfg, path)
	return v
}

// isSecretAt reports whether the value at a dotted path of cfg is secret
// (docs/secrets.md): written {secret: true, value: X}, or under a key named
// like a secret, at any step of the path.
func isSecretAt(cfg map[string]any, path string) bool {
	_, secret := lookup(cfg, path)
	return secret
}

func lookup(cfg map[string]any, path string) (any, bool) {
	var cur any = cfg
	secret := false
	for _, p := range strings.Split(path, ".") {
		m, ok := asMap(unwrap(cur, &secret))
		if !ok {
			return nil, false
		}
		cur = m[p]
		secret = secret || plan.IsSecretKey(p)
	}
	return unwrap(cur, &secret), secret
}

// unwrap returns the value of a secret wrapper (setting *secret), else v.
func unwrap(v any, secret *bool) any {
	if plan.IsSecretValue(v) {
		*secret = true
		return v.(map[string]any)["value"]
	}
	return v
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[fmt.Sprint(k)] = v
		}
		return out, true
	}
	return nil, false
}

func str(cfg map[string]any, path, def string) string {
	switch v := get(cfg, path).(type) {
	case nil:
		return def
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// fields reads the typed config values of one component. The first value of
// the wrong type is kept in err, prefixed with the component's address, and
// later reads return their defaults (bufio.Scanner's error latch).
type fields struct {
	cfg  map[string]any
	addr string
	err  error
}

func (f *fields) fail(err error) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: %w", f.addr, err)
	}
}

// num reads a number; def when the path is absent.
func (f *fields) num(path string, def float64) float64 {
	switch v := get(f.cfg, path).(type) {
	case nil:
		return def
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case float64:
		return v
	case json.Number:
		n, err := v.Float64()
		if err != nil {
			f.fail(fmt.Errorf("config %s: %w", path, err))
		}
		return n
	default:
		f.fail(fmt.Errorf("config %s: %v is not a number", path, v))
		return def
	}
}

// boolean reads true or false; def when the path is absent.
func (f *fields) boolean(path string, def bool) bool {
	switch v := get(f.cfg, path).(type) {
	case nil:
		return def
	case bool:
		return v
	default:
		f.fail(fmt.Errorf("config %s: %v is not true or false", path, v))
		return def
	}
}

// list reads a list of strings; nil when the path is absent.
func (f *fields) list(path string) []string {
	switch v := get(f.cfg, path).(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			out = append(out, fmt.Sprint(e))
		}
		return out
	case []string:
		return v
	default:
		f.fail(fmt.Errorf("config %s: %v is not a list", path, v))
		return nil
	}
}

// setIf sets m[key] when the config path is present.
func setIf(m pulumi.Map, key string, cfg map[string]any, path string) {
	if v := get(cfg, path); v != nil {
		m[key] = toInput(v)
	}
}

// toInput converts a plain config value (as decoded from YAML or JSON) into a
// Pulumi input; pulumi inputs inside are kept.
func toInput(v any) pulumi.Input {
	if plan.IsSecretValue(v) {
		return pulumi.ToSecret(toInput(v.(map[string]any)["value"]))
	}
	switch t := v.(type) {
	case pulumi.Input:
		return t
	case string:
		return pulumi.String(t)
	case bool:
		return pulumi.Bool(t)
	case int:
		return pulumi.Int(t)
	case int64:
		return pulumi.Int(int(t))
	case float64:
		return pulumi.Float64(t)
	case json.Number: // numbers as loaded from state (exact)
		if i, err := t.Int64(); err == nil {
			return pulumi.Int(int(i))
		}
		f, _ := t.Float64()
		return pulumi.Float64(f)
	case []any:
		a := make(pulumi.Array, 0, len(t))
		for _, e := range t {
			a = append(a, toInput(e))
		}
		return a
	case []string:
		return pulumi.ToStringArray(t)
	}
	if m, ok := asMap(v); ok {
		out := make(pulumi.Map, len(m))
		for k, e := range m {
			if e != nil {
				out[k] = toInput(e)
			}
		}
		return out
	}
	return pulumi.Any(v)
}

// keys returns the sorted keys of a map, for stable error messages.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

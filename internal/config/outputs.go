package config

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// OutputRef is one stack output of the top-level outputs: mapping
// (docs/operations.md#stack-outputs): the output at Path of component
// Address, written "${service/component.key.sub}" as PulumiResource
// properties refer to another component's output (docs/kinds.md).
type OutputRef struct {
	Address string   // "service/component"
	Path    []string // keys into the component's outputs, at least one
}

// String is the reference as written: "${service/component.key.sub}".
func (r OutputRef) String() string {
	return "${" + r.Address + "." + strings.Join(r.Path, ".") + "}"
}

// outputRefRE matches a whole reference to a component's output.
var outputRefRE = regexp.MustCompile(`^\$\{([a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*)((?:\.[^.}]+)+)\}$`)

// outputNameRE is what a stack output may be named: a letter, then
// letters, digits, '_' and '-' (api_url, userServiceApiUrl).
var outputNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,127}$`)

// ParseOutputRef parses "${service/component.key.sub}"; false when s is not
// exactly one such reference.
func ParseOutputRef(s string) (OutputRef, bool) {
	m := outputRefRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return OutputRef{}, false
	}
	return OutputRef{Address: m[1], Path: strings.Split(m[2][1:], ".")}, true
}

// checkOutputs checks the outputs: mapping: valid names, each value one
// reference to a component declared under services:.
func (l *loader) checkOutputs(c *Config) {
	for _, name := range slices.Sorted(maps.Keys(c.Outputs)) {
		p := "outputs." + name
		line := l.line(p)
		if !outputNameRE.MatchString(name) {
			l.add(line, p, "invalid output name %q: start with a letter, then letters, digits, '_' or '-' (at most 128 characters)", name)
			continue
		}
		ref, ok := ParseOutputRef(c.Outputs[name])
		if !ok {
			l.add(line, p, "want a reference to a component's output, \"${SERVICE/COMPONENT.KEY}\" (e.g. \"${app/api.url}\"), found %q", c.Outputs[name])
			continue
		}
		if c.component(ref.Address) == nil {
			l.add(line, p, "%s is not declared under services%s", ref.Address, didYouMean(ref.Address, c.addresses(false), ""))
		}
	}
}

// outputRefs is c.Outputs parsed (checked by checkOutputs); nil without any.
func (c *Config) outputRefs() map[string]OutputRef {
	if len(c.Outputs) == 0 {
		return nil
	}
	out := make(map[string]OutputRef, len(c.Outputs))
	for name, v := range c.Outputs {
		if ref, ok := ParseOutputRef(v); ok {
			out[name] = ref
		}
	}
	return out
}

// Value returns what r names in outputs, a component's outputs:
// the value at ref.Path (map keys at every step); false when a key is
// missing.
func (r OutputRef) Value(outputs map[string]any) (any, bool) {
	var cur any = outputs
	for _, k := range r.Path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

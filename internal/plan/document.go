package plan

import (
	"maps"
	"strconv"
)

// Document returns the plan as `plan --json` prints it and as policies
// read it (docs/plan.md "JSON", docs/policy.md#input): a copy whose diffs
// are masked again (MaskDiff) and whose steps show their config and the
// kind's own sections (settings) with every secret masked: values marked
// secret, under secret-named keys, and the paths the component lists under
// secrets:; its outputs' changes masked again. p is not changed.
func (p *Plan) Document() *Plan {
	out := *p
	out.Steps = make([]Step, len(p.Steps))
	for i, s := range p.Steps {
		diffs := make([]FieldDiff, len(s.Diffs))
		for j, f := range s.Diffs {
			diffs[j] = MaskDiff(f)
		}
		s.Diffs = diffs
		if s.Action != Delete && s.Config != nil {
			s.ShownConfig = maskListed("", Mask(s.Config), s.Secrets).(map[string]any)
		}
		if len(s.Settings) > 0 {
			s.ShownSettings = make(map[string]map[string]any, len(s.Settings))
			for name, sec := range maps.All(s.Settings) {
				m, _ := maskListed(name, Mask(sec), s.Secrets).(map[string]any)
				s.ShownSettings[name] = m
			}
		}
		out.Steps[i] = s
	}
	if p.Outputs != nil {
		out.Outputs = make([]FieldDiff, len(p.Outputs))
		for i, f := range p.Outputs {
			out.Outputs[i] = MaskDiff(f)
		}
	}
	return &out
}

// MaskDiff masks a diff again before output: Build already did, but what
// prints a plan must never print a secret whatever built it.
func MaskDiff(f FieldDiff) FieldDiff {
	if f.Sensitive {
		if f.Old != nil {
			f.Old = Masked
		}
		if f.New != nil {
			f.New = Masked
		}
	} else {
		f.Old, f.New = Mask(f.Old), Mask(f.New)
	}
	if f.Unknown {
		f.New = KnownAfterApply // never a value: nothing to mask
	}
	return f
}

// maskListed returns v (already a copy) with every value at or under one
// of the dotted paths in secrets masked; path is v's own.
func maskListed(path string, v any, secrets []string) any {
	if len(secrets) == 0 || v == nil {
		return v
	}
	for _, s := range secrets {
		if path != "" && underPath(path, s) {
			return Masked
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			child := k
			if path != "" {
				child = path + "." + k
			}
			t[k] = maskListed(child, x, secrets)
		}
	case []any:
		for i, x := range t {
			t[i] = maskListed(path+"["+strconv.Itoa(i)+"]", x, secrets)
		}
	}
	return v
}

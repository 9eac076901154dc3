package statestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"
)

// Decode reads a document with json.Unmarshal, which parses the bytes it is
// given in place, rather than a json.Decoder, which first copies them into a
// buffer it grows by doubling (about twice the document). Unmarshal has no
// UseNumber, so the fields that hold arbitrary JSON (map[string]any) are read
// through the types below: the same values a Decoder with UseNumber gives
// (json.Number for numbers, exactly as written; map[string]any, []any,
// string, bool, nil for the rest), so numbers re-encode exactly.

// stateJSON is State as Decode reads it: the fields holding arbitrary JSON
// are shadowed (a field of the outer struct wins over the embedded one with
// the same JSON name) by types that keep numbers exact.
type stateJSON struct {
	State
	Resources map[string]*resourceJSON `json:"resources"`
	Outputs   anyMap                   `json:"outputs"`
}

type resourceJSON struct {
	Resource
	DesiredConfig anyMap              `json:"desired_config"`
	ActualState   anyMap              `json:"actual_state"`
	Outputs       anyMap              `json:"outputs"`
	Inputs        *resolvedInputsJSON `json:"inputs,omitempty"`
}

type resolvedInputsJSON struct {
	Dependencies map[string]anyMap `json:"dependencies"`
}

// state moves the decoded fields into s.State and returns it.
func (s *stateJSON) state() *State {
	st := &s.State
	st.Outputs = s.Outputs
	st.Resources = nil
	if s.Resources != nil {
		st.Resources = make(map[string]*Resource, len(s.Resources))
	}
	for addr, r := range s.Resources {
		if r == nil {
			st.Resources[addr] = nil
			continue
		}
		res := &r.Resource
		res.DesiredConfig, res.ActualState, res.Outputs = r.DesiredConfig, r.ActualState, r.Outputs
		res.Inputs = nil
		if r.Inputs != nil {
			res.Inputs = &ResolvedInputs{}
			if r.Inputs.Dependencies != nil {
				res.Inputs.Dependencies = make(map[string]map[string]any, len(r.Inputs.Dependencies))
				for dep, outs := range r.Inputs.Dependencies {
					res.Inputs.Dependencies[dep] = outs
				}
			}
		}
		st.Resources[addr] = res
	}
	s.Resources, s.Outputs = nil, nil
	return st
}

// shadowErr names the model's types, not the shadows, in a type error.
func shadowErr(err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if name, ok := shadowed[typ.Struct]; ok {
			typ.Struct = name
		}
	}
	return err
}

var shadowed = map[string]string{"stateJSON": "State", "resourceJSON": "Resource", "resolvedInputsJSON": "ResolvedInputs"}

// anyMap is a JSON object of arbitrary values, numbers kept as json.Number.
type anyMap map[string]any

var anyMapType = reflect.TypeFor[map[string]any]()

// UnmarshalJSON implements json.Unmarshaler. json.Unmarshal validates the
// whole document before it calls it, so data is one valid JSON value.
func (m *anyMap) UnmarshalJSON(data []byte) error {
	p := anyParser{in: data}
	i := p.ws(0)
	switch {
	case i < len(data) && data[i] == 'n':
		*m = nil
		return nil
	case i >= len(data) || data[i] != '{':
		return &json.UnmarshalTypeError{Value: jsonKind(data[i:]), Type: anyMapType}
	}
	v, _, err := p.object(i)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

func jsonKind(data []byte) string {
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '"':
		return "string"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

// anyParser turns valid JSON into the values encoding/json gives an `any`
// with UseNumber.
type anyParser struct {
	in    []byte
	depth int // arrays and objects open, at most MaxNesting
}

// enter counts one more level of nesting at i; the caller defers leave.
func (p *anyParser) enter(i int) error {
	if p.depth++; p.depth > MaxNesting {
		return fmt.Errorf("json: arrays and objects nest deeper than %d levels at byte %d", MaxNesting, i)
	}
	return nil
}

func (p *anyParser) leave() { p.depth-- }

func (p *anyParser) ws(i int) int { return skipSpace(p.in, i) }

func (p *anyParser) errAt(i int) error {
	if i >= len(p.in) {
		return fmt.Errorf("json: %w", errTruncated)
	}
	return fmt.Errorf("json: invalid character %q at byte %d", p.in[i], i)
}

// value returns the value at i and the index after it.
func (p *anyParser) value(i int) (any, int, error) {
	if i >= len(p.in) {
		return nil, i, p.errAt(i)
	}
	switch b := p.in[i]; {
	case b == '{':
		return p.object(i)
	case b == '[':
		return p.array(i)
	case b == '"':
		return p.str(i)
	case b == 't' && len(p.in) >= i+4:
		return true, i + 4, nil
	case b == 'f' && len(p.in) >= i+5:
		return false, i + 5, nil
	case b == 'n' && len(p.in) >= i+4:
		return nil, i + 4, nil
	case b == '-' || (b >= '0' && b <= '9'):
		j := i + 1
		for j < len(p.in) {
			c := p.in[j]
			if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
				j++
				continue
			}
			break
		}
		return json.Number(p.in[i:j]), j, nil
	}
	return nil, i, p.errAt(i)
}

// str returns the string at i, unescaped as encoding/json does.
func (p *anyParser) str(i int) (string, int, error) {
	j := i + 1
	plain, ascii := true, true
	for j < len(p.in) && p.in[j] != '"' {
		switch c := p.in[j]; {
		case c == '\\':
			plain = false
			j++
		case c < 0x20:
			plain = false
		case c >= 0x80:
			ascii = false
		}
		j++
	}
	if j >= len(p.in) {
		return "", j, p.errAt(j)
	}
	if plain && (ascii || utf8.Valid(p.in[i+1:j])) {
		return string(p.in[i+1 : j]), j + 1, nil
	}
	var s string
	if err := json.Unmarshal(p.in[i:j+1], &s); err != nil {
		return "", j, err
	}
	return s, j + 1, nil
}

func (p *anyParser) object(i int) (map[string]any, int, error) {
	defer p.leave()
	if err := p.enter(i); err != nil {
		return nil, i, err
	}
	m := make(map[string]any)
	i = p.ws(i + 1)
	if i < len(p.in) && p.in[i] == '}' {
		return m, i + 1, nil
	}
	for {
		if i >= len(p.in) || p.in[i] != '"' {
			return nil, i, p.errAt(i)
		}
		key, j, err := p.str(i)
		if err != nil {
			return nil, j, err
		}
		if i = p.ws(j); i >= len(p.in) || p.in[i] != ':' {
			return nil, i, p.errAt(i)
		}
		var v any
		if v, i, err = p.value(p.ws(i + 1)); err != nil {
			return nil, i, err
		}
		m[key] = v
		if i = p.ws(i); i >= len(p.in) {
			return nil, i, p.errAt(i)
		}
		switch p.in[i] {
		case ',':
			i = p.ws(i + 1)
		case '}':
			return m, i + 1, nil
		default:
			return nil, i, p.errAt(i)
		}
	}
}

func (p *anyParser) array(i int) ([]any, int, error) {
	defer p.leave()
	if err := p.enter(i); err != nil {
		return nil, i, err
	}
	a := make([]any, 0)
	i = p.ws(i + 1)
	if i < len(p.in) && p.in[i] == ']' {
		return a, i + 1, nil
	}
	for {
		v, j, err := p.value(i)
		if err != nil {
			return nil, j, err
		}
		a = append(a, v)
		if i = p.ws(j); i >= len(p.in) {
			return nil, i, p.errAt(i)
		}
		switch p.in[i] {
		case ',':
			i = p.ws(i + 1)
		case ']':
			return a, i + 1, nil
		default:
			return nil, i, p.errAt(i)
		}
	}
}

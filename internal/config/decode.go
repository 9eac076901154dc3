package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// The model's structs are the schema (docs/configuration.md#keys): each
// field's yaml tag is its key, written nowhere else. decode fills them from
// the YAML node tree, which keeps every value's line, so each problem is
// reported with its line and YAML path and decoding goes on after it
// (docs/decisions.md, "One YAML schema"). Beside yaml, a field may carry:
//
//	check:"NAME"   the value is read and checked by checks[NAME] instead of by its Go type
//	names:"KIND"   a map whose keys are names of KIND ("environment"): checked
//	               against the name rule, and "a mapping of KIND names" in errors
//	keys:"KIND"    the same without the name rule (the rule is checked elsewhere)
//
// A field tagged yaml:"*" (a map of *yaml.Node) takes the keys of the
// kinds' own sections (Kind.Sections; without WithKinds, every other key)
// as written, for the engines to decode.
//
// A Go type decode does not know is a programming error: it panics, and
// every test that parses a file finds it.

// at is where a decoded value was written: its key (nil for a list element)
// and its value node.
type at struct{ key, val *yaml.Node }

// line is the line of the value at path, 0 when it was not written.
func (l *loader) line(path string) int {
	if a, ok := l.at[path]; ok {
		return a.val.Line
	}
	return 0
}

// keyLine is the line of the key of path, 0 when it was not written.
func (l *loader) keyLine(path string) int {
	if a, ok := l.at[path]; ok && a.key != nil {
		return a.key.Line
	}
	return 0
}

// field is one key of a struct's schema.
type field struct {
	key   string
	index int
	check string // checks[check] reads the value
	names string // map keys are names of this kind ("environment")
	valid bool   // names are checked against the name rule
}

// schema is the keys of a struct type, in declaration order.
type schema struct {
	fields []field
	byKey  map[string]int
	keys   []string
	want   string // "stack, backend, ...": what a non-mapping is told to be
	rest   int    // index of the yaml:"*" field; -1 without
}

var schemas sync.Map // reflect.Type -> *schema

func schemaOf(t reflect.Type) *schema {
	if s, ok := schemas.Load(t); ok {
		return s.(*schema)
	}
	s := &schema{byKey: map[string]int{}, rest: -1}
	for i := range t.NumField() {
		sf := t.Field(i)
		key := sf.Tag.Get("yaml")
		if key == "" || key == "-" {
			continue
		}
		if key == "*" {
			s.rest = i
			continue
		}
		f := field{key: key, index: i, check: sf.Tag.Get("check"), names: sf.Tag.Get("names"), valid: true}
		if f.names == "" {
			f.names, f.valid = sf.Tag.Get("keys"), false
		}
		if f.check != "" && checks[f.check] == nil {
			// unreachable: a check tag names a Go struct field's rule, fixed at
			// build time; no deployer.yaml can reach this (every schema type is
			// decoded by the package's tests).
			panic("config: " + t.String() + "." + sf.Name + ": no check " + f.check) // unreachable: see above
		}
		s.byKey[key] = len(s.fields)
		s.fields = append(s.fields, f)
		s.keys = append(s.keys, key)
	}
	s.want = strings.Join(s.keys, ", ")
	schemas.Store(t, s)
	return s
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	stringsType  = reflect.TypeFor[[]string]()
	valuesType   = reflect.TypeFor[map[string]any]()
)

// decodeStruct fills the struct v from the mapping n: unknown keys (with
// the closest known one), duplicates and a non-mapping are problems; a null
// leaves v as it is.
func (l *loader) decodeStruct(n *yaml.Node, path string, v reflect.Value) {
	s := schemaOf(v.Type())
	keys, want := s.keys, s.want
	if s.rest >= 0 && l.kinds != nil {
		if l.sections == nil { // one struct (Component) takes sections
			l.sections = l.withSections(s.keys)
		}
		keys, want = l.sections, strings.Join(l.sections, ", ")
	}
	l.entries(n, path, want, func(key string, k, val *yaml.Node) {
		p := join(path, key)
		if i, ok := s.byKey[key]; ok {
			f := s.fields[i]
			l.decode(k, val, p, f, v.Field(f.index))
			return
		}
		if s.rest < 0 || (l.kinds != nil && !slices.Contains(keys, key)) {
			l.unknownKey(k, path, keys)
			return
		}
		l.at[p] = at{key: k, val: val}
		m := v.Field(s.rest)
		if m.IsNil() {
			m.Set(reflect.MakeMap(m.Type()))
		}
		m.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(val))
	})
}

// unknownKey reports the key k of the mapping at path, not among allowed,
// with the closest allowed key or the list.
func (l *loader) unknownKey(k *yaml.Node, path string, allowed []string) {
	l.add(k.Line, join(path, k.Value), "unknown key%s", didYouMean(k.Value, allowed, "allowed: "+strings.Join(allowed, ", ")))
}

// withSections is keys followed by the kinds' own sections (Kind.Sections),
// in the order of the kinds' names, each once.
func (l *loader) withSections(keys []string) []string {
	out := slices.Clone(keys)
	for _, name := range l.kindNames() {
		for _, s := range l.kinds[name].Sections {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// decode fills dst from the value node n of key k (nil for a list element)
// and remembers where it was written.
func (l *loader) decode(k, n *yaml.Node, path string, f field, dst reflect.Value) {
	n = deref(n)
	l.at[path] = at{key: k, val: n}
	if f.check != "" {
		if v, ok := checks[f.check](l, n, path); ok {
			dst.Set(reflect.ValueOf(v))
		}
		return
	}
	t := dst.Type()
	switch t {
	case durationType:
		dst.SetInt(int64(l.duration(n, path)))
		return
	case stringsType:
		dst.Set(reflect.ValueOf(l.strList(n, path)))
		return
	case valuesType:
		dst.Set(reflect.ValueOf(l.configMap(n, path)))
		return
	}
	switch t.Kind() {
	case reflect.String:
		s, _ := l.str(n, path)
		dst.SetString(s)
	case reflect.Bool:
		var b bool
		if err := n.Decode(&b); err != nil {
			l.add(n.Line, path, "want true or false, found %s", kindName(n))
		}
		dst.SetBool(b)
	case reflect.Struct:
		l.decodeStruct(n, path, dst)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		l.decodeStruct(n, path, p.Elem())
		dst.Set(p)
	case reflect.Slice:
		l.decodeList(n, path, dst)
	case reflect.Map:
		m := reflect.MakeMap(t)
		l.entries(n, path, f.names+" names", func(name string, k, v *yaml.Node) {
			p := join(path, name)
			if f.valid {
				if msg := nameProblem(f.names, name); msg != "" {
					l.add(k.Line, p, "%s", msg)
				}
			}
			e := reflect.New(t.Elem()).Elem()
			l.decode(k, v, p, field{}, e)
			m.SetMapIndex(reflect.ValueOf(name), e)
		})
		dst.Set(m)
	default:
		// unreachable: t is a field type of the config structs, not anything
		// a deployer.yaml chooses; a new field of an unsupported type fails
		// the package's tests.
		panic("config: no decoder for " + t.String() + " at " + path) // unreachable: see above
	}
}

// decodeList fills dst, a slice of structs, from the sequence n: each
// element a mapping decoded at PATH[i]; null is an empty list.
func (l *loader) decodeList(n *yaml.Node, path string, dst reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		l.add(n.Line, path, "want a list, found %s", kindName(n))
		return
	}
	out := reflect.MakeSlice(dst.Type(), 0, len(n.Content))
	for i, e := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		e = deref(e)
		l.at[p] = at{val: e}
		v := reflect.New(dst.Type().Elem()).Elem()
		l.decodeStruct(e, p, v)
		out = reflect.Append(out, v)
	}
	dst.Set(out)
}

// nameProblem is what is wrong with name, a key under a map of names of
// kind ("environment"), or "".
func nameProblem(kind, name string) string {
	if ValidateName(kind, name) != nil {
		return fmt.Sprintf("invalid %s name %q: %s", kind, name, nameRule)
	}
	if kind == sharedKind && len(name) > MaxSharedNameLen {
		return fmt.Sprintf("shared resource name %q is longer than %d characters (its lock key is guard-NAME; use a shorter name)", name, MaxSharedNameLen)
	}
	return ""
}

// checks are the readers a field's check tag names: each reads the value
// node at path and returns the value to store, or false (after reporting
// the problem, or for nothing to store).
var checks map[string]func(l *loader, n *yaml.Node, path string) (any, bool)

func init() {
	checks = map[string]func(l *loader, n *yaml.Node, path string) (any, bool){
		// stack: a name (docs/configuration.md#names).
		"name": func(l *loader, n *yaml.Node, path string) (any, bool) {
			s, ok := l.str(n, path)
			if !ok || s == "" {
				return nil, false
			}
			if ValidateName(path, s) != nil {
				l.add(n.Line, path, "invalid name %q: %s", s, nameRule)
			}
			return s, true
		},
		"parallelism": func(l *loader, n *yaml.Node, path string) (any, bool) {
			var v int
			if err := n.Decode(&v); err != nil || v < 1 {
				l.add(n.Line, path, "want a positive whole number of components to apply at once (default %d), found %q", DefaultParallelism, n.Value)
				return nil, false
			}
			return v, true
		},
		"state-url": backendURL("state"),
		"lock-url":  backendURL("lock"),
		// backend.sse: S3 server-side encryption (docs/aws.md).
		"sse": func(l *loader, n *yaml.Node, path string) (any, bool) {
			s, _ := l.str(n, path)
			if s != "" && s != "AES256" && s != "aws:kms" {
				l.add(n.Line, path, "unknown server-side encryption %q (use AES256 or aws:kms)", s)
			}
			return s, true
		},
		// A size in bytes: 1024, 64MiB, 500MB (ParseSize).
		"size": func(l *loader, n *yaml.Node, path string) (any, bool) {
			s, ok := l.str(n, path)
			if !ok || s == "" {
				return nil, false
			}
			size, err := ParseSize(s)
			if err != nil {
				l.add(n.Line, path, "%v", err)
			}
			return size, true
		},
		// shared.NAME.max_retries (docs/guard.md).
		"retries": func(l *loader, n *yaml.Node, path string) (any, bool) {
			s, ok := l.str(n, path)
			if !ok {
				return nil, false
			}
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 || v > 20 {
				l.add(n.Line, path, "max_retries must be a whole number from 0 to 20, found %q (the lock is retried this many times before the stop is skipped)", s)
				return nil, false
			}
			return v, true
		},
		"status-url": func(l *loader, n *yaml.Node, path string) (any, bool) {
			s, _ := l.str(n, path)
			if msg := checkStatusURL(s); msg != "" {
				l.add(n.Line, path, "%s", msg)
			}
			return s, true
		},
	}
}

// backendURL reads backend.state or backend.lock (which) and checks it
// (checkBackendURL).
func backendURL(which string) func(l *loader, n *yaml.Node, path string) (any, bool) {
	return func(l *loader, n *yaml.Node, path string) (any, bool) {
		s, ok := l.str(n, path)
		if !ok || s == "" {
			return nil, false
		}
		if msg := l.checkBackendURL(which, s); msg != "" {
			l.add(n.Line, path, "%s", msg)
		}
		return s, true
	}
}

package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// BackendSchemes are the backend URL schemes deployer can open, state and
// lock, as the backend registry lists them (internal/backends.Schemes,
// docs/backends.md). config may not import the registry
// (docs/design.md#package-map), so the CLI passes them in with
// WithBackends; without them Load, Parse and ApplyEnv check only the form
// of backend.state and backend.lock, and opening the backend refuses an
// unknown scheme.
type BackendSchemes struct {
	State, Lock SchemeList
}

// SchemeList is the backends of one role (state or lock).
type SchemeList struct {
	// Names is every scheme that opens one: "file", "s3", "postgres",
	// "postgresql". "none" stands for the URL "none" (locking off).
	Names []string
	// Forms is what errors suggest, in order: "file://DIR",
	// "s3://BUCKET?region=REGION", "none".
	Forms []string
}

// Suggestion renders Forms as "use A, B or C" for errors; "see
// docs/backends.md" without them.
func (s SchemeList) Suggestion() string {
	switch n := len(s.Forms); n {
	case 0:
		return "see docs/backends.md"
	case 1:
		return "use " + s.Forms[0]
	default:
		return "use " + strings.Join(s.Forms[:n-1], ", ") + " or " + s.Forms[n-1]
	}
}

// Option changes how Load, Parse and ApplyEnv check a configuration.
type Option func(*loader)

// Kind is what config checks of one component kind, from the engine that
// applies it (engine.Kind, listed by internal/engines.Kinds).
type Kind struct {
	Name string
	// Engine names the engine in messages ("Pulumi").
	Engine string
	// Sections are the component keys beyond kind, depends_on, config,
	// environments and secrets that the kind takes ("command"); other
	// kinds refuse them.
	Sections []string
	// Requires are the component paths the kind cannot do without.
	Requires []Requirement
	// Decode, when set, decodes and checks one of the kind's sections
	// (s.Name is one of Sections), reporting what is wrong through s with
	// lines and paths. It returns the section's settings as a plan diffs
	// them ("command.update") and the engine applies them: strings,
	// numbers, bools, lists and maps. Without Decode a section's settings
	// are its values as written.
	Decode func(s *Section) map[string]any
	// Import says whether the kind's components may carry an import:
	// block and what an import needs (docs/operations.md#import).
	Import ImportRule
}

// ImportRule says whether a kind can adopt an existing instance by its id
// (a component's import: block, deployer import) and what it needs to.
type ImportRule struct {
	// Supported: the kind's engine can import its components.
	Supported bool
	// Why says, when not Supported, why not ("it is several Pulumi
	// resources"); "" says the engine adopts nothing by id.
	Why string
	// Requires are the component paths an import cannot do without
	// ("command.read"), each with what it is for.
	Requires []Requirement
}

// Section is one of a kind's own sections of a component, as written in
// deployer.yaml, handed to the kind's Decode. Its helpers report problems
// as config reports its own: "FILE:LINE: PATH: what is wrong (the fix)".
type Section struct {
	Name string     // the component key: "command"
	Path string     // its dotted path: "services.web.components.site.command"
	Node *yaml.Node // the section's value, aliases resolved
	l    *loader
}

// Decode fills dst, a pointer to a struct whose yaml tags name the
// section's keys, as config fills its own model (decode.go: strings, bools,
// positive durations, lists of strings, maps of values, nested structs).
// A section that is not a mapping, a duplicate or unknown key (with the
// closest known one) and a value of the wrong form are reported with line
// and path; null leaves dst as it is. Anything but a pointer to a struct
// panics.
func (s *Section) Decode(dst any) {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		// unreachable: dst is an engine's own Go value, never user input; an
		// engine passing anything else fails its tests.
		panic(fmt.Sprintf("config: Section.Decode of %T, want a pointer to a struct", dst)) // unreachable: see above
	}
	s.l.decodeStruct(s.Node, s.Path, v.Elem())
}

// Errorf reports a problem with v, the value of key ("" for the section
// itself); the message says what is wrong, then the fix in parentheses.
func (s *Section) Errorf(v *yaml.Node, key, format string, args ...any) {
	s.l.add(v.Line, join(s.Path, key), format, args...)
}

// decodeSections fills comp.Settings from comp.Sections: with k's Decode
// for the sections k takes (k nil: no kinds are known, every section is
// kept as written). Sections k does not take are left out (checkKind
// reports them).
func (l *loader) decodeSections(comp *Component, pos *compPos, k *Kind) {
	for _, name := range slices.Sorted(maps.Keys(comp.Sections)) {
		n, path := comp.Sections[name], pos.path+"."+name
		var m map[string]any
		switch {
		case k == nil || (k.Decode == nil && slices.Contains(k.Sections, name)):
			m = l.configMap(n, path)
		case slices.Contains(k.Sections, name):
			m = k.Decode(&Section{Name: name, Path: path, Node: n, l: l})
		default:
			continue
		}
		if m == nil {
			m = map[string]any{}
		}
		if comp.Settings == nil {
			comp.Settings = map[string]map[string]any{}
		}
		comp.Settings[name] = m
	}
}

// Requirement is one dotted component path a kind needs ("command.create")
// and what it is for, said in the error when it is missing.
type Requirement struct{ Path, Why string }

// WithKinds checks each component against kinds, the engines' kind catalogs
// as the engine registry lists them (internal/engines.Kinds): its kind, the
// sections it may have and the paths it needs. config may not import the
// registry, so the CLI passes them in; without them any kind passes here
// and deploy refuses a kind no engine applies.
func WithKinds(kinds []Kind) Option {
	return func(l *loader) {
		l.kinds = map[string]Kind{}
		for _, k := range kinds {
			l.kinds[k.Name] = k
		}
	}
}

// kindNames is the sorted names of l.kinds.
func (l *loader) kindNames() []string { return slices.Sorted(maps.Keys(l.kinds)) }

// checkKind checks comp against its kind (known, sections, requirements).
func (l *loader) checkKind(comp *Component, pos *compPos) {
	names := l.kindNames()
	k, known := l.kinds[comp.Kind]
	switch {
	case comp.Kind == "" && l.kinds == nil:
		l.add(pos.line, pos.path+".kind", "kind is required")
		return
	case comp.Kind == "":
		l.add(pos.line, pos.path+".kind", "kind is required (one of %s)", strings.Join(names, ", "))
		return
	case l.kinds == nil:
		l.decodeSections(comp, pos, nil)
		l.checkImport(comp, pos, nil)
		return
	case !known:
		l.add(pos.kindLine, pos.path+".kind", "unknown kind %q%s", comp.Kind, didYouMean(comp.Kind, names, "known kinds: "+strings.Join(names, ", ")))
		return
	}
	l.decodeSections(comp, pos, &k)
	l.checkImport(comp, pos, &k)
	for _, r := range k.Requires {
		section, key, _ := strings.Cut(r.Path, ".")
		if v, _ := comp.Settings[section][key].(string); v != "" {
			continue
		}
		line := pos.line
		if pos.sections[section] > 0 {
			line = pos.sections[section]
		}
		l.add(line, pos.path+"."+r.Path, "kind %s needs %s (%s)", comp.Kind, r.Path, r.Why)
		return
	}
	for _, section := range slices.Sorted(maps.Keys(pos.sections)) {
		if slices.Contains(k.Sections, section) {
			continue
		}
		var takers []string
		for _, name := range names {
			if slices.Contains(l.kinds[name].Sections, section) {
				takers = append(takers, name)
			}
		}
		l.add(pos.sections[section], pos.path+"."+section, "%s is only allowed for kind %s (kind %s is applied by %s; remove %s)",
			section, strings.Join(takers, " or "), comp.Kind, k.Engine, section)
	}
}

// WithBackends checks backend.state and backend.lock (and
// DEPLOYER_BACKEND_STATE / DEPLOYER_BACKEND_LOCK) against s.
func WithBackends(s BackendSchemes) Option {
	return func(l *loader) { l.backends = s }
}

// checkImport checks comp's import: block (docs/operations.md#import): an
// id written, a kind k (nil: kinds unknown, any) that can import, and the
// paths k needs for it.
func (l *loader) checkImport(comp *Component, pos *compPos, k *Kind) {
	if comp.Import == nil {
		return
	}
	path := pos.path + ".import"
	line := l.line(path)
	if comp.Import.ID == "" {
		l.add(line, path+".id", "import needs the id of the existing instance to adopt, e.g. import: {id: i-0abc123}")
		return
	}
	if k == nil {
		return
	}
	if msg := k.Import.Problem(comp.Kind, k.Engine, comp.Settings); msg != "" {
		l.add(line, path, "%s", msg)
	}
}

// Problem is what keeps a component of kind, applied by engine, with
// settings from being imported under rule r, ending in the fix; "" when
// nothing does.
func (r ImportRule) Problem(kind, engine string, settings map[string]map[string]any) string {
	if !r.Supported {
		why := r.Why
		if why == "" {
			why = engine + " adopts no existing instance by id"
		}
		return fmt.Sprintf("kind %s cannot be imported (%s): remove import:", kind, why)
	}
	for _, q := range r.Requires {
		section, key, _ := strings.Cut(q.Path, ".")
		if v, _ := settings[section][key].(string); v == "" {
			return fmt.Sprintf("kind %s needs %s to import (%s): add %s", kind, q.Path, q.Why, q.Path)
		}
	}
	return ""
}

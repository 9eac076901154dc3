package plan

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

// Diff operations of FieldDiff.Op.
const (
	OpAdd    = "add"
	OpChange = "change"
	OpRemove = "remove"
)

// Pseudo-paths of diffs that are not in config.
const (
	PathKind      = "(kind)"       // the component's kind changed: forces replacement
	PathDependsOn = "(depends_on)" // its depends_on changed
	PathStatus    = "(status)"     // the last apply failed: it is applied again
)

// A diff compares two config trees the one way config is compared (Equal:
// maps by key, lists by element, numbers by value, absent and null alike),
// walking their children side by side (mapChildren, listChildren): the
// plan's field diffs (differ) and a saved plan's first difference from now
// (CompareBinding) name the same paths.

// differ collects the field diffs of one component's config (docs/plan.md):
// maps are compared key by key at any depth, lists element by element
// ("ports[0]"), everything else as a value; absent and null are the same;
// numbers compare by value whatever their Go type.
type differ struct {
	secrets []string // dotted paths marked secret by the component
	out     []FieldDiff
}

// FieldDiffs returns the field diffs from old to new, compared as config is
// (maps by key at any depth, lists by element, numbers by value; absent and
// null alike), with secret values and the values of secret-named keys
// masked: what plan --refresh reports as drift.
func FieldDiffs(old, new map[string]any) []FieldDiff {
	d := &differ{}
	d.compare("", old, new)
	return d.out
}

// compare adds the diffs from old to new, two trees rooted at path.
func (d *differ) compare(path string, old, new any) {
	d.walk(child{path: path, a: old, b: new}, false)
}

// walk adds the diffs of c, from c.a to c.b; secret says a key above it
// names a secret. Whether c is a secret is asked once, here: a value
// written {secret: true, value: X} on either side is compared whole, and
// a key that names a secret makes everything under it secret. Maps and
// lists are walked child by child; anything else that differs is a diff.
func (d *differ) walk(c child, secret bool) {
	wrapped := sensitive.IsSecretValue(c.a) || sensitive.IsSecretValue(c.b)
	secret = secret || wrapped || (c.key != "" && sensitive.IsSecretKey(c.key))
	if !wrapped {
		om, oMap := c.a.(map[string]any)
		nm, nMap := c.b.(map[string]any)
		if (oMap || c.a == nil) && (nMap || c.b == nil) && (oMap || nMap) {
			for k := range mapChildren(c.path, om, nm) {
				if !Equal(k.a, k.b) {
					d.walk(k, secret)
				}
			}
			return
		}
		ol, oList := c.a.([]any)
		nl, nList := c.b.([]any)
		if (oList || c.a == nil) && (nList || c.b == nil) && (oList || nList) {
			for e := range listChildren(c.path, ol, nl) {
				d.walk(e, secret)
			}
			return
		}
	}
	if !Equal(c.a, c.b) {
		d.emit(c.path, c.a, c.b, secret)
	}
}

func (d *differ) emit(path string, old, new any, secret bool) {
	if !secret {
		for _, s := range d.secrets {
			if underPath(path, s) {
				secret = true
				break
			}
		}
	}
	f := FieldDiff{Path: path, Op: OpChange, Sensitive: secret}
	switch {
	case old == nil:
		f.Op = OpAdd
	case new == nil:
		f.Op = OpRemove
	}
	if secret {
		if old != nil {
			old = Masked
		}
		if new != nil {
			new = Masked
		}
	}
	f.Old, f.New = Mask(old), Mask(new)
	d.out = append(d.out, f)
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
		for _, name := range unionKeys(s.Settings, n.Settings) {
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

// child is one child of two config values compared side by side: the
// values at one key or index of each (nil where one has none).
type child struct {
	key, path string // key is "" for a list element
	a, b      any
}

// mapChildren yields the children of two maps (either may be nil): every
// key of either, sorted, at joinPath(path, key). The plan's diffs and a
// saved plan's binding both walk config so, and name the same paths.
func mapChildren(path string, a, b map[string]any) iter.Seq[child] {
	return func(yield func(child) bool) {
		for _, k := range unionKeys(a, b) {
			if !yield(child{key: k, path: joinPath(path, k), a: a[k], b: b[k]}) {
				return
			}
		}
	}
}

// listChildren yields the children of two lists element by element, at
// path[i], up to the longer one's length (nil past the shorter one's end).
func listChildren(path string, a, b []any) iter.Seq[child] {
	return func(yield func(child) bool) {
		for i := range max(len(a), len(b)) {
			c := child{path: path + "[" + strconv.Itoa(i) + "]"}
			if i < len(a) {
				c.a = a[i]
			}
			if i < len(b) {
				c.b = b[i]
			}
			if !yield(c) {
				return
			}
		}
	}
}

// unionKeys is the sorted union of the keys of a and b (either may be nil):
// the keys of two config maps, or of two kinds' settings by section.
func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	keys = slices.AppendSeq(keys, maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// underPath reports whether path is p or lies below it ("a.b" and "a.b[0]"
// are under "a.b"; "a.bc" is not).
func underPath(path, p string) bool {
	return path == p || (len(path) > len(p) && strings.HasPrefix(path, p) && (path[len(p)] == '.' || path[len(p)] == '['))
}

// forcesReplacement reports whether a change at path touches one of the
// replace-on paths: the same path, one below it, or one above it.
func forcesReplacement(path string, replaceOn []string) bool {
	for _, r := range replaceOn {
		if underPath(path, r) || underPath(r, path) {
			return true
		}
	}
	return false
}

// Equal compares two config values deeply: maps by key (a null value and an
// absent key are equal), lists by element, numbers by value (5, 5.0,
// int64(5) and json.Number("5") are equal), everything else with ==.
func Equal(a, b any) bool {
	if na, ok := toNumber(a); ok {
		nb, ok := toNumber(b)
		return ok && na.equal(nb)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range x {
			if !Equal(v, y[k]) {
				return false
			}
		}
		for k, v := range y {
			if _, ok := x[k]; !ok && v != nil {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string, bool:
		return a == b
	}
	return false
}

type number struct {
	i     int64
	f     float64
	isInt bool
}

func (a number) equal(b number) bool {
	if a.isInt && b.isInt {
		return a.i == b.i
	}
	return a.float() == b.float()
}

func (a number) float() float64 {
	if a.isInt {
		return float64(a.i)
	}
	return a.f
}

func toNumber(v any) (number, bool) {
	switch n := v.(type) {
	case int:
		return number{i: int64(n), isInt: true}, true
	case int64:
		return number{i: n, isInt: true}, true
	case int32:
		return number{i: int64(n), isInt: true}, true
	case uint64:
		if n <= math.MaxInt64 {
			return number{i: int64(n), isInt: true}, true
		}
		return number{f: float64(n)}, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return number{i: int64(n), isInt: true}, true
		}
		return number{f: n}, true
	case float32:
		return toNumber(float64(n))
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return number{i: i, isInt: true}, true
		}
		if f, err := n.Float64(); err == nil {
			return toNumber(f)
		}
	}
	return number{}, false
}

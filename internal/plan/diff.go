package plan

import (
	"encoding/json"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
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
	d.walk("", old, new, false)
	return d.out
}

func (d *differ) walk(path string, old, new any, sensitive bool) {
	if IsSecretValue(old) || IsSecretValue(new) {
		if !Equal(old, new) {
			d.emit(path, old, new, true)
		}
		return
	}
	om, oMap := old.(map[string]any)
	nm, nMap := new.(map[string]any)
	if (oMap || old == nil) && (nMap || new == nil) && (oMap || nMap) {
		for c := range mapChildren(path, om, nm) {
			if !Equal(c.a, c.b) {
				d.walk(c.path, c.a, c.b, sensitive || IsSecretKey(c.key))
			}
		}
		return
	}
	ol, oList := old.([]any)
	nl, nList := new.([]any)
	if (oList || old == nil) && (nList || new == nil) && (oList || nList) {
		for c := range listChildren(path, ol, nl) {
			d.walk(c.path, c.a, c.b, sensitive)
		}
		return
	}
	if !Equal(old, new) {
		d.emit(path, old, new, sensitive)
	}
}

func (d *differ) emit(path string, old, new any, sensitive bool) {
	if !sensitive {
		for _, s := range d.secrets {
			if underPath(path, s) {
				sensitive = true
				break
			}
		}
	}
	f := FieldDiff{Path: path, Op: OpChange, Sensitive: sensitive}
	switch {
	case old == nil:
		f.Op = OpAdd
	case new == nil:
		f.Op = OpRemove
	}
	if sensitive {
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
		keys := make([]string, 0, len(a)+len(b))
		keys = slices.AppendSeq(keys, maps.Keys(a))
		for k := range b {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
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

// Package jsontree copies the value trees that configuration and state hold
// (map[string]any and []any, as decoded from YAML or JSON, with scalars at the
// leaves) while rewriting some of their nodes: masking secrets for output,
// unwrapping them for engines, dropping an engine's private keys. One walk,
// so each rewrite states only what it changes (docs/design.md#package-map).
// It also merges one map tree into a copy of another (Merge: an
// environment's overrides of a component's config).
package jsontree

// Omit, returned by a Rewrite for a member of a map, leaves that member out
// of the copy. Returned for a list element or the root, it stands as nil.
var Omit any = omit{}

type omit struct{}

// Rewrite decides one node of the tree. key is the node's name in its map,
// "" for a list element and the root. It returns the node's replacement and
// true, or false to have the node copied with each of its children rewritten
// in turn.
type Rewrite func(key string, v any) (any, bool)

// Copy returns a copy of v in which every node is what fn makes of it, top
// down: a node fn replaces is not descended into. With a nil fn it is a deep
// copy. Every map and list of the copy is new (a nil one becomes empty); v is
// not changed.
func Copy(v any, fn Rewrite) any {
	if c := copyNode("", v, fn); c != Omit {
		return c
	}
	return nil
}

// CopyMap copies a map and every map and list inside it; nil stays nil.
func CopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out, _ := Copy(m, nil).(map[string]any)
	return out
}

// Merge returns a new map: base with override merged in. Where both hold
// a map the maps merge recursively; any other override value (lists, scalars)
// replaces the base value; a null override value removes the key. Neither
// argument is changed and the result shares no maps or lists with them.
func Merge(base, override map[string]any) map[string]any {
	out := CopyMap(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, ov := range override {
		if ov == nil {
			delete(out, k)
			continue
		}
		om, oIsMap := ov.(map[string]any)
		bm, bIsMap := out[k].(map[string]any)
		if oIsMap && bIsMap {
			out[k] = Merge(bm, om)
		} else {
			out[k] = Copy(ov, nil)
		}
	}
	return out
}

func copyNode(key string, v any, fn Rewrite) any {
	if fn != nil {
		if r, ok := fn(key, v); ok {
			return r
		}
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if c := copyNode(k, x, fn); c != Omit {
				out[k] = c
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			if c := copyNode("", x, fn); c != Omit {
				out[i] = c
			}
		}
		return out
	}
	return v
}

// MapStrings returns a copy of v with every string in it, map keys
// included, replaced by what f makes of it: how a masker sees a whole tree,
// where a secret may stand inside any string, a key too. Of two keys f
// makes equal one value stays. v is not changed.
func MapStrings(v any, f func(string) string) any {
	switch t := v.(type) {
	case string:
		return f(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[f(k)] = MapStrings(x, f)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = MapStrings(x, f)
		}
		return out
	}
	return v
}

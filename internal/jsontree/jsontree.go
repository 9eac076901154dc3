// Package jsontree copies the value trees that configuration and state hold
// (map[string]any and []any, as decoded from YAML or JSON, with scalars at the
// leaves) while rewriting some of their nodes: masking secrets for output,
// unwrapping them for engines, dropping an engine's private keys. One walk,
// so each rewrite states only what it changes (docs/design.md#package-map).
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

package statestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"
)

// Canonical JSON, the input of every checksum (docs/state-format.md#checksums-and-canonical-json):
//
//   - no insignificant whitespace;
//   - the members of every object sorted by key, comparing the keys' UTF-8
//     bytes after unescaping (the order encoding/json gives map keys);
//     duplicate keys are an error;
//   - strings written as encoding/json writes them with HTML escaping off:
//     `"` and `\` escaped, \n \r \t \b \f, other control characters and
//     U+2028/U+2029 as \u00XX/\u2028, everything else as literal UTF-8;
//   - numbers written exactly as they appear in the document (deployer never
//     rewrites a number: 1.0, 1e3 and 12345678901234567890 stay as written);
//   - true, false and null as themselves; arrays keep their order.
//
// So the canonical JSON of a value does not depend on indentation or on the
// order of keys in the file: `jq -cS .resources` prints the same bytes for
// documents without escapes that jq writes differently.

// Checksum returns "sha256:<hex>" of the canonical JSON of v, marshalled with
// encoding/json (json.Number values keep their exact text).
func Checksum(v any) (string, error) {
	raw, err := marshalCompact(v)
	if err != nil {
		return "", err
	}
	return checksumRaw(raw)
}

// checksumRaw returns "sha256:<hex>" of the canonical form of the JSON text raw.
func checksumRaw(raw []byte) (string, error) {
	c := canonicalizer{in: raw}
	sum, i, err := c.digestValue(c.ws(0))
	if err != nil {
		return "", err
	}
	if i = c.ws(i); i != len(raw) {
		return "", fmt.Errorf("canonical json: unexpected %q after the value at byte %d", raw[i], i)
	}
	return sum, nil
}

// A checksum is "sha256:" and the lowercase hex SHA-256 of canonical JSON
// (docs/state-format.md#checksums-and-canonical-json). newChecksum returns
// the hash to feed canonical JSON in pieces, checksumOf writes out its sum,
// and digest does both for bytes held whole.
func newChecksum() hash.Hash { return sha256.New() }

// checksumOf returns "sha256:<hex>" of what h, from newChecksum, was fed.
func checksumOf(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

// digest returns "sha256:<hex>" of b.
func digest(b []byte) string {
	h := newChecksum()
	h.Write(b)
	return checksumOf(h)
}

// Canonicalize returns the canonical JSON (defined above) of the single JSON
// value in data; an error when data is not exactly one valid JSON value or an
// object repeats a key.
func Canonicalize(data []byte) ([]byte, error) {
	c := canonicalizer{in: data, out: make([]byte, 0, len(data))}
	i, err := c.value(c.ws(0))
	if err != nil {
		return nil, err
	}
	if i = c.ws(i); i != len(data) {
		return nil, fmt.Errorf("canonical json: unexpected %q after the value at byte %d", data[i], i)
	}
	return c.out, nil
}

// digestMembers validates data, which must be one JSON object, and returns
// the digests of the canonical JSON of the values of the given top-level
// keys that it has. A repeated top-level key is an error.
func digestMembers(data []byte, keys ...string) (map[string]string, error) {
	c := canonicalizer{in: data}
	i := c.ws(0)
	if i >= len(data) || data[i] != '{' {
		return nil, c.errAt(i, "want a JSON object")
	}
	sums := map[string]string{}
	seen := map[string]bool{}
	i = c.ws(i + 1)
	for i >= len(data) || data[i] != '}' {
		if len(seen) > 0 {
			if i >= len(data) || data[i] != ',' {
				return nil, c.errAt(i, "want ',' or '}'")
			}
			i = c.ws(i + 1)
		}
		if i >= len(data) || data[i] != '"' {
			return nil, c.errAt(i, "want an object key")
		}
		kb, j, err := c.str(i, true)
		if err != nil {
			return nil, err
		}
		key := string(kb)
		if seen[key] {
			return nil, fmt.Errorf("canonical json: duplicate key %q in the document", key)
		}
		seen[key] = true
		if i = c.ws(j); i >= len(data) || data[i] != ':' {
			return nil, c.errAt(i, "want ':'")
		}
		c.out = c.out[:0]
		if slices.Contains(keys, key) {
			if sums[key], i, err = c.digestValue(c.ws(i + 1)); err != nil {
				return nil, err
			}
		} else if i, err = c.value(c.ws(i + 1)); err != nil {
			return nil, err
		}
		i = c.ws(i)
	}
	if i = c.ws(i + 1); i != len(data) {
		return nil, fmt.Errorf("canonical json: unexpected %q after the document at byte %d", data[i], i)
	}
	return sums, nil
}

// digestValue returns the digest of the canonical form of the value at i
// and the index after it. An object whose keys are already in canonical
// order (as encoding/json writes a map) is hashed member by member, so only
// one member's canonical JSON is held at a time; any other value is
// canonicalized whole first.
func (c *canonicalizer) digestValue(i int) (string, int, error) {
	mark := len(c.out)
	defer func() { c.out = c.out[:mark] }()
	whole := func() (string, int, error) {
		c.out = c.out[:mark]
		j, err := c.value(i)
		if err != nil {
			return "", j, err
		}
		return digest(c.out[mark:]), j, nil
	}
	if i >= len(c.in) || c.in[i] != '{' {
		return whole()
	}
	h := newChecksum()
	h.Write([]byte{'{'})
	j := c.ws(i + 1)
	var prev []byte
	for n := 0; j >= len(c.in) || c.in[j] != '}'; n++ {
		if n > 0 {
			if j >= len(c.in) || c.in[j] != ',' {
				return "", j, c.errAt(j, "want ',' or '}'")
			}
			j = c.ws(j + 1)
			c.out = append(c.out[:mark], ',')
		}
		if j >= len(c.in) || c.in[j] != '"' {
			return "", j, c.errAt(j, "want an object key")
		}
		key, k, err := c.str(j, true)
		if err != nil {
			return "", k, err
		}
		if n > 0 && bytes.Compare(prev, key) >= 0 {
			return whole() // not in canonical order (or a repeated key)
		}
		prev = key
		if j = c.ws(k); j >= len(c.in) || c.in[j] != ':' {
			return "", j, c.errAt(j, "want ':'")
		}
		c.out = append(c.out, ':')
		if j, err = c.value(c.ws(j + 1)); err != nil {
			return "", j, err
		}
		h.Write(c.out[mark:])
		c.out = c.out[:mark]
		j = c.ws(j)
	}
	h.Write([]byte{'}'})
	return checksumOf(h), j + 1, nil
}

// marshalCompact marshals v without HTML escaping and without the trailing newline.
func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// MaxNesting is how deeply arrays and objects may nest in a state document,
// as encoding/json allows: the hand-written scanners refuse deeper input
// with an error rather than recurse without bound.
const MaxNesting = 10000

type canonicalizer struct {
	depth   int // arrays and objects open
	in      []byte
	out     []byte
	scratch []byte   // reordered members, reused
	members []member // the members of the objects being read, innermost last
}

// member is one object member already written to out[start:end] as key:value.
type member struct {
	key        []byte // unescaped: a subslice of in when the key has no escapes
	start, end int
}

func (c *canonicalizer) ws(i int) int { return skipSpace(c.in, i) }

// skipSpace returns the index of the first byte at or after i in in that is
// not JSON whitespace.
func skipSpace(in []byte, i int) int {
	for i < len(in) {
		switch in[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// errTruncated is wrapped by errors about input that ends inside a value.
var errTruncated = errors.New("unexpected end of JSON input")

func (c *canonicalizer) errAt(i int, what string) error {
	if i >= len(c.in) {
		return fmt.Errorf("canonical json: %w (%s)", errTruncated, what)
	}
	return fmt.Errorf("canonical json: invalid character %q at byte %d (%s)", c.in[i], i, what)
}

// value writes the canonical form of the value starting at i and returns the
// index after it.
func (c *canonicalizer) value(i int) (int, error) {
	if i >= len(c.in) {
		return i, c.errAt(i, "want a value")
	}
	switch b := c.in[i]; {
	case b == '{':
		return c.object(i)
	case b == '[':
		return c.array(i)
	case b == '"':
		_, j, err := c.str(i, false)
		return j, err
	case b == 't':
		return c.literal(i, "true")
	case b == 'f':
		return c.literal(i, "false")
	case b == 'n':
		return c.literal(i, "null")
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number(i)
	}
	return i, c.errAt(i, "want a value")
}

func (c *canonicalizer) literal(i int, lit string) (int, error) {
	if !bytes.HasPrefix(c.in[i:], []byte(lit)) {
		return i, c.errAt(i, "want "+lit)
	}
	c.out = append(c.out, lit...)
	return i + len(lit), nil
}

// number copies a JSON number literal after checking its grammar.
func (c *canonicalizer) number(i int) (int, error) {
	start := i
	if c.in[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(c.in) && c.in[i] >= '0' && c.in[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(c.in) && c.in[i] == '0' {
		i++
	} else if digits() == 0 {
		return i, c.errAt(i, "want a digit")
	}
	if i < len(c.in) && c.in[i] == '.' {
		i++
		if digits() == 0 {
			return i, c.errAt(i, "want a digit after '.'")
		}
	}
	if i < len(c.in) && (c.in[i] == 'e' || c.in[i] == 'E') {
		i++
		if i < len(c.in) && (c.in[i] == '+' || c.in[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, c.errAt(i, "want a digit in the exponent")
		}
	}
	c.out = append(c.out, c.in[start:i]...)
	return i, nil
}

// str writes the canonical form of the string at i and returns the index
// after it and, when key is true (or the string had escapes), its value
// (a subslice of in when it has no escapes).
func (c *canonicalizer) str(i int, key bool) ([]byte, int, error) {
	j := i + 1
	for j < len(c.in) {
		b := c.in[j]
		if b == '"' {
			c.out = append(c.out, c.in[i:j+1]...)
			if !key {
				return nil, j + 1, nil
			}
			return c.in[i+1 : j], j + 1, nil
		}
		if b == '\\' || b < 0x20 || b >= 0x80 {
			return c.slowStr(i)
		}
		j++
	}
	return nil, j, c.errAt(j, "unterminated string")
}

// slowStr handles strings with escapes or non-ASCII bytes: unescape, then
// re-escape as encoding/json does (HTML escaping off).
func (c *canonicalizer) slowStr(i int) ([]byte, int, error) {
	j := i + 1
	for j < len(c.in) && c.in[j] != '"' {
		if c.in[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(c.in) {
		return nil, j, c.errAt(j, "unterminated string")
	}
	var s string
	if err := json.Unmarshal(c.in[i:j+1], &s); err != nil {
		return nil, j, fmt.Errorf("canonical json: string at byte %d: %w", i, err)
	}
	enc, err := marshalCompact(s)
	if err != nil {
		return nil, j, err
	}
	c.out = append(c.out, enc...)
	return []byte(s), j + 1, nil
}

// enter counts one more level of nesting at i; the caller defers leave.
func (c *canonicalizer) enter(i int) error {
	if c.depth++; c.depth > MaxNesting {
		return fmt.Errorf("canonical json: arrays and objects nest deeper than %d levels at byte %d", MaxNesting, i)
	}
	return nil
}

func (c *canonicalizer) leave() { c.depth-- }

func (c *canonicalizer) array(i int) (int, error) {
	defer c.leave()
	if err := c.enter(i); err != nil {
		return i, err
	}
	c.out = append(c.out, '[')
	i = c.ws(i + 1)
	if i < len(c.in) && c.in[i] == ']' {
		c.out = append(c.out, ']')
		return i + 1, nil
	}
	for {
		var err error
		if i, err = c.value(i); err != nil {
			return i, err
		}
		i = c.ws(i)
		if i >= len(c.in) {
			return i, c.errAt(i, "unterminated array")
		}
		switch c.in[i] {
		case ',':
			c.out = append(c.out, ',')
			i = c.ws(i + 1)
		case ']':
			c.out = append(c.out, ']')
			return i + 1, nil
		default:
			return i, c.errAt(i, "want ',' or ']'")
		}
	}
}

func (c *canonicalizer) object(i int) (int, error) {
	defer c.leave()
	if err := c.enter(i); err != nil {
		return i, err
	}
	c.out = append(c.out, '{')
	first := len(c.out)
	i = c.ws(i + 1)
	if i < len(c.in) && c.in[i] == '}' {
		c.out = append(c.out, '}')
		return i + 1, nil
	}
	base := len(c.members)
	defer func() { c.members = c.members[:base] }()
	sorted := true
	for {
		if i >= len(c.in) || c.in[i] != '"' {
			return i, c.errAt(i, "want an object key")
		}
		start := len(c.out)
		key, j, err := c.str(i, true)
		if err != nil {
			return j, err
		}
		i = c.ws(j)
		if i >= len(c.in) || c.in[i] != ':' {
			return i, c.errAt(i, "want ':'")
		}
		c.out = append(c.out, ':')
		if i, err = c.value(c.ws(i + 1)); err != nil {
			return i, err
		}
		if n := len(c.members); n > base && bytes.Compare(c.members[n-1].key, key) >= 0 {
			sorted = false
		}
		c.members = append(c.members, member{key: key, start: start, end: len(c.out)})
		i = c.ws(i)
		if i >= len(c.in) {
			return i, c.errAt(i, "unterminated object")
		}
		if c.in[i] == '}' {
			break
		}
		if c.in[i] != ',' {
			return i, c.errAt(i, "want ',' or '}'")
		}
		c.out = append(c.out, ',')
		i = c.ws(i + 1)
	}
	if !sorted {
		if err := c.reorder(first, c.members[base:]); err != nil {
			return i, err
		}
	}
	c.out = append(c.out, '}')
	return i + 1, nil
}

// reorder rewrites out[first:] with the members sorted by key.
func (c *canonicalizer) reorder(first int, members []member) error {
	slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	for k := 1; k < len(members); k++ {
		if bytes.Equal(members[k-1].key, members[k].key) {
			return fmt.Errorf("canonical json: duplicate object key %q", members[k].key)
		}
	}
	c.scratch = append(c.scratch[:0], c.out[first:]...)
	c.out = c.out[:first]
	for k, m := range members {
		if k > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.scratch[m.start-first:m.end-first]...)
	}
	return nil
}

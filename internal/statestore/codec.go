package statestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Encode computes st.Checksums (the checksums of resources and outputs, see
// Checksum) and returns the deployer-state-v1 document: JSON with a 2-space
// indent, fields in the order of docs/state-format.md#document, a trailing newline. It sets
// st.Checksums and fills an empty Version/FormatVersion; nil maps are written
// as {} and a nil deployment_history as [] (a nil map and an empty one are
// the same state). A nil entry in st.Resources is an error.
func Encode(st *State) ([]byte, error) {
	if st == nil {
		return nil, errors.New("encode state: nil state")
	}
	if st.Version == "" {
		st.Version = DocVersion
	}
	if st.FormatVersion == "" {
		st.FormatVersion = FormatVersion
	}
	res, err := normalizedResources(st.Resources)
	if err != nil {
		return nil, err
	}
	outs := st.Outputs
	if outs == nil {
		outs = map[string]any{}
	}
	rawOuts, err := marshalCompact(outs)
	if err != nil {
		return nil, fmt.Errorf("encode state outputs: %w", err)
	}
	var cs Checksums
	if cs.Outputs, err = checksumRaw(rawOuts); err != nil {
		return nil, fmt.Errorf("checksum of outputs: %w", err)
	}
	return writeDocument(st, func(dst []byte, name string) ([]byte, bool, error) {
		switch name {
		case "resources":
			dst, cs.Resources, err = appendResources(dst, res, 1)
			return dst, true, err
		case "outputs":
			return appendIndented(dst, rawOuts, 1), true, nil
		case "checksums":
			// The checksums field comes after resources and outputs (the
			// documented order): both are known by now.
			st.Checksums = cs
		}
		return dst, false, nil
	})
}

// writeDocument writes the fields of st in declaration order, 2-space
// indented. field writes the value of the field named name itself when it
// returns true; the others are marshalled from st.
func writeDocument(st *State, field func(dst []byte, name string) ([]byte, bool, error)) ([]byte, error) {
	buf := make([]byte, 0, 4096)
	buf = append(buf, '{')
	v := reflect.ValueOf(st).Elem()
	first := true
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		key, _ := marshalCompact(name)
		buf = append(append(append(buf, "\n  "...), key...), ": "...)
		var done bool
		var err error
		if buf, done, err = field(buf, name); err != nil {
			return nil, err
		}
		if !done {
			val := fv.Interface()
			if fv.Kind() == reflect.Slice && fv.IsNil() {
				val = []struct{}{}
			}
			b, err := marshalCompact(val)
			if err != nil {
				return nil, fmt.Errorf("encode state %s: %w", name, err)
			}
			buf = appendIndented(buf, b, 1)
		}
	}
	return append(buf, "\n}\n"...), nil
}

// appendResources appends res to dst as the resources field at depth (the
// layout of appendIndented) and returns the checksum of res. Resources are
// marshalled one at a time, in the sorted order of their addresses
// (encoding/json's order for a map), and their canonical JSON is hashed as
// it is made, so neither the compact JSON of the whole map nor its
// canonical form is ever held: the memory used is the document and one
// resource.
func appendResources(dst []byte, res map[string]*Resource, depth int) ([]byte, string, error) {
	addrs := slices.Sorted(maps.Keys(res))
	for _, a := range addrs {
		if !utf8.ValidString(a) {
			// encoding/json sorts such keys before replacing their invalid
			// bytes; canonical JSON sorts after: take the general path.
			raw, err := marshalCompact(res)
			if err != nil {
				return nil, "", fmt.Errorf("encode state resources: %w", err)
			}
			sum, err := checksumRaw(raw)
			if err != nil {
				return nil, "", fmt.Errorf("checksum of resources: %w", err)
			}
			return appendIndented(dst, raw, depth), sum, nil
		}
	}
	if len(addrs) == 0 {
		return append(dst, "{}"...), digest([]byte("{}")), nil
	}
	var (
		buf bytes.Buffer
		c   canonicalizer
		h   = newChecksum()
	)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	dst = append(dst, '{')
	h.Write([]byte{'{'})
	start := len(dst)
	for n, a := range addrs {
		buf.Reset()
		// The address and the resource, each followed by a newline.
		if err := enc.Encode(a); err != nil {
			return nil, "", fmt.Errorf("encode state resources: %w", err)
		}
		if err := enc.Encode(res[a]); err != nil {
			return nil, "", fmt.Errorf("encode state resources: %w", err)
		}
		b := buf.Bytes()
		nl := bytes.IndexByte(b, '\n')
		key, val := b[:nl], b[nl+1:len(b)-1]
		if n > 0 {
			dst = append(dst, ',')
			h.Write([]byte{','})
		}
		dst = appendNewline(dst, depth+1)
		dst = append(append(dst, key...), ':', ' ')
		dst = appendIndented(dst, val, depth+1)
		// The address as encoding/json writes it is canonical.
		c.in, c.out = val, append(append(c.out[:0], key...), ':')
		if _, err := c.value(0); err != nil {
			return nil, "", fmt.Errorf("checksum of resources: %w", err)
		}
		h.Write(c.out)
		if n == 15 && len(addrs) > 64 {
			// Room for the rest, estimated from the first 16.
			per := (len(dst) - start) / 16
			dst = slices.Grow(dst, per*(len(addrs)-16)+per/8*len(addrs))
		}
	}
	dst = append(appendNewline(dst, depth), '}')
	h.Write([]byte{'}'})
	return dst, checksumOf(h), nil
}

// normalizedResources returns res with nil maps replaced by empty ones and
// nil dependencies by an empty list, copying only the entries it changes.
func normalizedResources(res map[string]*Resource) (map[string]*Resource, error) {
	if res == nil {
		return map[string]*Resource{}, nil
	}
	var out map[string]*Resource
	for addr, r := range res {
		if r == nil {
			return nil, fmt.Errorf("encode state: resources[%q] is nil", addr)
		}
		if r.DesiredConfig != nil && r.ActualState != nil && r.Outputs != nil && r.Dependencies != nil {
			continue
		}
		if out == nil {
			out = make(map[string]*Resource, len(res))
			for a, r := range res {
				out[a] = r
			}
		}
		c := *r
		normalizeResource(&c)
		out[addr] = &c
	}
	if out == nil {
		return res, nil
	}
	return out, nil
}

func normalizeResource(r *Resource) {
	if r.DesiredConfig == nil {
		r.DesiredConfig = map[string]any{}
	}
	if r.ActualState == nil {
		r.ActualState = map[string]any{}
	}
	if r.Outputs == nil {
		r.Outputs = map[string]any{}
	}
	if r.Dependencies == nil {
		r.Dependencies = []string{}
	}
}

// Decode parses a deployer-state-v1 document and verifies its checksums.
// Numbers inside desired_config, actual_state and outputs decode as
// json.Number, so they re-encode exactly. location names the document in
// errors. It returns *ChecksumError when a checksum does not match (Field
// "resources" or "outputs", with both digests) or when the document does not
// parse or is not deployer-state-v1 (Field "document"). Nil maps in the
// result are replaced by empty ones.
func Decode(data []byte, location string) (*State, error) {
	// One pass of our own scanner validates the document and yields the
	// digests of the canonical JSON of resources and outputs as the file
	// holds them.
	type canonical struct {
		sums map[string]string
		err  error
	}
	done := make(chan canonical, 1)
	go func() {
		m, err := digestMembers(data, "resources", "outputs")
		done <- canonical{m, err}
	}()
	var sj stateJSON // numbers in arbitrary JSON kept exact, see anyjson.go
	derr := shadowErr(json.Unmarshal(data, &sj))
	st := sj.state()
	canon := <-done
	if canon.err != nil {
		return nil, corrupt(location, data, describeParseError(canon.err, data))
	}
	if derr != nil {
		return nil, corrupt(location, data, describeParseError(derr, data))
	}
	if st.FormatVersion != FormatVersion {
		return nil, corrupt(location, data, fmt.Sprintf("format_version is %q, this deployer reads %q", st.FormatVersion, FormatVersion))
	}
	for _, part := range []struct {
		field, stored string
	}{{"resources", st.Checksums.Resources}, {"outputs", st.Checksums.Outputs}} {
		computed, ok := canon.sums[part.field]
		if !ok {
			return nil, corrupt(location, data, fmt.Sprintf("the %s field is missing", part.field))
		}
		if computed != part.stored {
			return nil, &ChecksumError{Location: location, Field: part.field, Stored: part.stored, Computed: computed}
		}
	}
	if st.Resources == nil {
		st.Resources = map[string]*Resource{}
	}
	for addr, r := range st.Resources {
		if r == nil {
			return nil, corrupt(location, data, fmt.Sprintf("resources[%q] is null", addr))
		}
		normalizeResource(r)
	}
	if st.Outputs == nil {
		st.Outputs = map[string]any{}
	}
	if st.DeploymentHistory == nil {
		st.DeploymentHistory = []Deployment{}
	}
	return st, nil
}

var recordedChecksum = regexp.MustCompile(`"resources"\s*:\s*"(sha256:[0-9a-f]{64})"`)

// corrupt builds the *ChecksumError of a document that cannot be verified:
// Stored is the resources checksum recorded in it, if one can be found, and
// Computed the digest of the bytes read.
func corrupt(location string, data []byte, detail string) *ChecksumError {
	e := &ChecksumError{Location: location, Field: "document", Computed: digest(data)}
	if m := recordedChecksum.FindSubmatch(data); m != nil {
		e.Stored = string(m[1])
	}
	stored := e.Stored
	if stored == "" {
		stored = "none readable"
	}
	e.Detail = fmt.Sprintf("%s (%d bytes read, digest %s; recorded resources checksum: %s)", detail, len(data), e.Computed, stored)
	return e
}

func describeParseError(err error, data []byte) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(data)) == 0:
		return "the file is empty"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errTruncated):
		return "the document ends early: it is truncated"
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d: %v", syn.Offset, err)
	case errors.As(err, &typ) && typ.Offset > 0:
		return fmt.Sprintf("field %s at byte %d: %v", typ.Field, typ.Offset, err)
	case errors.As(err, &typ): // from anyMap, which does not know the offset
		return fmt.Sprintf("field %s: %v", typ.Field, err)
	}
	return err.Error()
}

package statestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
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
	rawRes, err := marshalCompact(res)
	if err != nil {
		return nil, fmt.Errorf("encode state resources: %w", err)
	}
	outs := st.Outputs
	if outs == nil {
		outs = map[string]any{}
	}
	rawOuts, err := marshalCompact(outs)
	if err != nil {
		return nil, fmt.Errorf("encode state outputs: %w", err)
	}
	// The checksums are computed while the document is indented; the
	// checksums field comes last (the documented order).
	type sums struct {
		cs  Checksums
		err error
	}
	done := make(chan sums, 1)
	go func() {
		var r sums
		if r.cs.Resources, r.err = checksumRaw(rawRes); r.err != nil {
			r.err = fmt.Errorf("checksum of resources: %w", r.err)
		} else if r.cs.Outputs, r.err = checksumRaw(rawOuts); r.err != nil {
			r.err = fmt.Errorf("checksum of outputs: %w", r.err)
		}
		done <- r
	}()
	waited := false
	wait := func() error {
		r := <-done
		waited = true
		st.Checksums = r.cs
		return r.err
	}
	doc, err := writeDocument(st, map[string][]byte{"resources": rawRes, "outputs": rawOuts}, "checksums", wait)
	if !waited {
		if werr := wait(); err == nil {
			err = werr
		}
	}
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// writeDocument writes the fields of st in declaration order, 2-space
// indented, taking the already marshalled bytes of the fields in raw. It
// calls before() just before reading the field named late.
func writeDocument(st *State, raw map[string][]byte, late string, before func() error) ([]byte, error) {
	buf := make([]byte, 0, len(raw["resources"])*3/2+4096)
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
		if name == late {
			if err := before(); err != nil {
				return nil, err
			}
		}
		b, ok := raw[name]
		if !ok {
			val := fv.Interface()
			if fv.Kind() == reflect.Slice && fv.IsNil() {
				val = []struct{}{}
			}
			var err error
			if b, err = marshalCompact(val); err != nil {
				return nil, fmt.Errorf("encode state %s: %w", name, err)
			}
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		key, _ := marshalCompact(name)
		buf = append(append(append(buf, "\n  "...), key...), ": "...)
		buf = appendIndented(buf, b, 1)
	}
	return append(buf, "\n}\n"...), nil
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
	// canonical JSON of resources and outputs as the file holds them.
	type canonical struct {
		members map[string][]byte
		err     error
	}
	done := make(chan canonical, 1)
	go func() {
		m, err := canonicalMembers(data, "resources", "outputs")
		done <- canonical{m, err}
	}()
	var st State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	derr := dec.Decode(&st)
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
		c, ok := canon.members[part.field]
		if !ok {
			return nil, corrupt(location, data, fmt.Sprintf("the %s field is missing", part.field))
		}
		if computed := digest(c); computed != part.stored {
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
	return &st, nil
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
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s at byte %d: %v", typ.Field, typ.Offset, err)
	}
	return err.Error()
}

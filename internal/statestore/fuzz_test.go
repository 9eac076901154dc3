package statestore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

// FuzzDecode feeds Decode arbitrary bytes, seeded with a valid document and
// broken copies of it. Whatever it gets, Decode returns an error or a state
// (never panics), and a state it accepts encodes to a document that decodes
// to the same checksums: nothing it loads is lost on the next save.
// Run longer with: go test -run '^$' -fuzz FuzzDecode ./internal/statestore/
const fuzzMaxDoc = 64 << 10

func FuzzDecode(f *testing.F) {
	doc, err := statestore.Encode(storetest.SeedState("user-platform", "production"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Add(doc[:len(doc)/2])                                             // truncated
	f.Add(bytes.Replace(doc, []byte(`"ready"`), []byte(`"ready!"`), 1)) // tampered
	f.Add(bytes.Replace(doc, []byte(`"resources": {`), []byte(`"resources": {"":null,`), 1))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version":"deployer-state-v1","resources":{"a":{"outputs":{"n":1e999}}}}`))
	f.Add([]byte("\xff\xfe"))
	// Nesting deeper than MaxNesting (and just within it) in a resource's
	// outputs, in arrays and in objects: an error, never a stack overflow.
	for _, depth := range []int{statestore.MaxNesting - 3, statestore.MaxNesting + 1, 3 * statestore.MaxNesting / 2} {
		f.Add(nested(doc, depth, "[", "]"))
		f.Add(nested(doc, depth, `{"a":`, "}"))
	}
	// Oversize: a valid document padded past the Store's limit.
	f.Add(append(bytes.Repeat([]byte(" "), fuzzMaxDoc), doc...))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Through a Store with a small limit: an oversize document is refused
		// before it is decoded.
		s := statestore.New(&recorder{doc: data}, statestore.WithMaxDocumentBytes(fuzzMaxDoc))
		var tl *statestore.TooLargeError
		if _, _, err := s.Load(context.Background(), "user-platform", "production"); (len(data) > fuzzMaxDoc) != errors.As(err, &tl) {
			t.Fatalf("%d bytes, limit %d: %v", len(data), fuzzMaxDoc, err)
		}
		st, err := statestore.Decode(data, "fuzz.json")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error message")
			}
			return
		}
		again, err := statestore.Encode(st)
		if err != nil {
			// A decoded state that cannot be saved must say so, not lose data.
			var ce *statestore.ChecksumError
			if errors.As(err, &ce) || err.Error() == "" {
				t.Fatalf("re-encode of an accepted document: %v", err)
			}
			return
		}
		st2, err := statestore.Decode(again, "fuzz-again.json")
		if err != nil {
			t.Fatalf("a re-encoded accepted document does not load: %v\n%s", err, again)
		}
		if st2.Checksums != st.Checksums || st2.Serial != st.Serial || st2.Lineage != st.Lineage {
			t.Fatalf("load, save, load changed the state: %+v / %+v", st.Checksums, st2.Checksums)
		}
	})
}

// nested returns doc with the outputs of its first resource replaced by
// {"deep": V}, V being depth levels of open...close around null.
func nested(doc []byte, depth int, open, close string) []byte {
	v := strings.Repeat(open, depth) + "null" + strings.Repeat(close, depth)
	out := bytes.Replace(doc, []byte(`"outputs": {`), []byte(`"outputs": {"deep": `+v+`, `), 1)
	if bytes.Equal(out, doc) {
		panic("nested: the seed document has no outputs object")
	}
	return out
}

// A document nested millions of levels deep (state push of a hostile
// file) is refused with an error by every scanner: checksums, canonical
// JSON and decoding.
func TestDeepNestingIsAnErrorNotACrash(t *testing.T) {
	doc, err := statestore.Encode(storetest.SeedState("user-platform", "production"))
	if err != nil {
		t.Fatal(err)
	}
	for _, shape := range [][2]string{{"[", "]"}, {`{"a":`, "}"}} {
		deep := nested(doc, 10_000_000, shape[0], shape[1])
		if _, err := statestore.Decode(deep, "deep.json"); err == nil {
			t.Errorf("%s: Decode accepted %d levels", shape[0], 10_000_000)
		}
		v := []byte(strings.Repeat(shape[0], 10_000_000) + "1" + strings.Repeat(shape[1], 10_000_000))
		if _, err := statestore.Canonicalize(v); err == nil || !strings.Contains(err.Error(), "nest deeper than") {
			t.Errorf("%s: Canonicalize: %v", shape[0], err)
		}
		ok := []byte(strings.Repeat(shape[0], statestore.MaxNesting) + "1" + strings.Repeat(shape[1], statestore.MaxNesting))
		if _, err := statestore.Canonicalize(ok); err != nil {
			t.Errorf("%s: %d levels should be accepted: %v", shape[0], statestore.MaxNesting, err)
		}
	}
}

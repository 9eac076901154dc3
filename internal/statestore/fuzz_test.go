package statestore_test

import (
	"bytes"
	"context"
	"errors"
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

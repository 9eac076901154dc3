package statestore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	st := storetest.SeedState("user-platform", "production")
	doc, err := statestore.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, lit := range []string{`"maxBytes": 18446744073709551616`, `"iops": 9007199254740993`, `"tiny": 1e-7`, `"price": 12.50`,
		`"team:<users & auth>"`, "\n  \"resources\": {\n    \"user-service/api\": {\n      \"kind\": \"MicroService\","} {
		if !bytes.Contains(doc, []byte(lit)) {
			t.Errorf("document does not contain %q", lit)
		}
	}
	got, err := statestore.Decode(doc, "test.json")
	if err != nil {
		t.Fatalf("Decode of an encoded state: %v", err)
	}
	if diff := cmp.Diff(st, got); diff != "" {
		t.Fatalf("round trip (-encoded +decoded):\n%s", diff)
	}
	again, err := statestore.Encode(got)
	if err != nil || !bytes.Equal(again, doc) {
		t.Fatalf("re-encoding a decoded state changed the document (err %v)", err)
	}
	if sum, _ := statestore.Checksum(st.Resources); sum != st.Checksums.Resources {
		t.Fatalf("Checksum(resources) = %s, the document records %s", sum, st.Checksums.Resources)
	}
}

// A state built with nil maps and one with empty maps are the same state.
func TestNilAndEmptyMapsHaveOneChecksum(t *testing.T) {
	withNil := statestore.NewState("s", "e")
	withNil.Resources = map[string]*statestore.Resource{"a/b": {Kind: "Command"}}
	withNil.Outputs = nil
	withEmpty := statestore.NewState("s", "e")
	withEmpty.Lineage = withNil.Lineage
	withEmpty.Resources = map[string]*statestore.Resource{"a/b": {Kind: "Command",
		DesiredConfig: map[string]any{}, ActualState: map[string]any{}, Outputs: map[string]any{}, Dependencies: []string{}}}
	a, err := statestore.Encode(withNil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := statestore.Encode(withEmpty)
	if err != nil {
		t.Fatal(err)
	}
	if withNil.Checksums != withEmpty.Checksums || !bytes.Equal(a, b) {
		t.Fatalf("nil maps give checksums %+v, empty maps %+v", withNil.Checksums, withEmpty.Checksums)
	}
	if withNil.Resources["a/b"].DesiredConfig != nil {
		t.Fatal("Encode changed the caller's resources")
	}
	got, err := statestore.Decode(a, "x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Resources["a/b"].DesiredConfig == nil || got.Outputs == nil {
		t.Fatal("Decode returned nil maps")
	}
}

func TestDecodeVerifies(t *testing.T) {
	st := storetest.SeedState("s", "e")
	doc, err := statestore.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	// Reformatting and reordering keys keep the checksums valid.
	var generic map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(generic)
	if _, err := statestore.Decode(compact, "compact.json"); err != nil {
		t.Fatalf("Decode of the same document compacted with sorted keys: %v", err)
	}

	cases := []struct {
		name, field string
		doc         []byte
	}{
		{"outputs edited", "outputs", bytes.Replace(doc, []byte(`"https://api.company.com/users"`), []byte(`"https://evil.example.com/users"`), 1)},
		{"number rewritten", "resources", bytes.Replace(doc, []byte(`12.50`), []byte(`12.5`), 1)},
		{"checksum removed", "resources", bytes.Replace(doc, []byte(st.Checksums.Resources), []byte(""), 1)},
		{"truncated", "document", doc[:len(doc)-40]},
		{"empty", "document", nil},
		{"trailing data", "document", append(append([]byte{}, doc...), []byte(`{}`)...)},
		{"other format", "document", bytes.Replace(doc, []byte(`"deployer-state-v1"`), []byte(`"deployer-state-v2"`), 1)},
		{"duplicate key", "document", bytes.Replace(doc, []byte(`"serial": 1,`), []byte(`"serial": 1, "serial": 2,`), 1)},
	}
	for _, c := range cases {
		_, err := statestore.Decode(c.doc, "state.json")
		var ce *statestore.ChecksumError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want *ChecksumError", c.name, err)
			continue
		}
		if ce.Field != c.field || ce.Location != "state.json" || !strings.HasPrefix(ce.Computed, "sha256:") || !strings.Contains(err.Error(), "state.json") {
			t.Errorf("%s: %+v, want field %s, location state.json and the computed digest", c.name, ce, c.field)
		}
	}
}

func TestEncodeRefusesNilResource(t *testing.T) {
	st := statestore.NewState("s", "e")
	st.Resources["a/b"] = nil
	if _, err := statestore.Encode(st); err == nil || !strings.Contains(err.Error(), "a/b") {
		t.Fatalf("Encode of a nil resource: %v, want an error naming it", err)
	}
}

// The engine's private record is kept under "pulumi" exactly as the state
// format has it: {urn, id} or {urns} as written, null when the engine keeps
// none; statestore carries it without reading it.
func TestEngineDataKeepsThePulumiKey(t *testing.T) {
	st := storetest.SeedState("user-platform", "production")
	st.Resources["docs/site"] = &statestore.Resource{Kind: "Command", Status: statestore.ResourceReady}
	st.Resources["odd/one"] = &statestore.Resource{Kind: "RDS", EngineData: statestore.EngineData(`{"urn":"urn:a&b<c>","id":"x"}`)}
	doc, err := statestore.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, lit := range []string{
		"\"pulumi\": {\n        \"urn\": \"urn:pulumi:production::user-platform::aws:rds/instance:Instance::user-service-database\",\n        \"id\": \"user-db-prod\"\n      },",
		"\"pulumi\": {\n        \"urns\": [\n          \"urn:pulumi:production::user-platform::aws:ecs/service:Service::user-api\",",
		"\"pulumi\": null,",
		`"urn": "urn:a&b<c>"`,
	} {
		if !bytes.Contains(doc, []byte(lit)) {
			t.Errorf("document does not contain %q", lit)
		}
	}
	got, err := statestore.Decode(doc, "test.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Resources["docs/site"].EngineData != nil || string(got.Resources["odd/one"].EngineData) != `{"urn":"urn:a&b<c>","id":"x"}` {
		t.Errorf("decoded engine data: %q and %q", got.Resources["docs/site"].EngineData, got.Resources["odd/one"].EngineData)
	}
	if again, err := statestore.Encode(got); err != nil || !bytes.Equal(again, doc) {
		t.Errorf("re-encoding changed the document (err %v)", err)
	}
}

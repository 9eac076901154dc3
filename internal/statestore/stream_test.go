package statestore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The digest computed member by member equals the digest of the whole
// canonical form, and both refuse the same inputs.
func TestChecksumRawMatchesCanonicalize(t *testing.T) {
	for _, in := range []string{
		`{"b":1,"a":2}`, `{"a":2,"b":1}`, `{"a":{"z":1,"y":[{"q":1,"p":2}]},"b":"x"}`,
		" {\n  \"z\" : [ 3 , {\"y\":null,\"x\":true} ],\t\"a\":\"s\" }\n",
		`{"é":1,"e":2,"\u0065a":3}`, `{"e":1,"\u0065":2}`, `{"a":1,"a":2}`, `{"b":1,"a":1,"a":2}`,
		`{"\u003ca":{"<b":1}}`, `{}`, `[]`, `"s"`, `12.50`, `null`,
		``, `{`, `{"a":1,}`, `{"a" 1}`, `{} x`, `{"a":}`, `{"a":1 "b":2}`, "{\"a\":\"\x01\"}",
	} {
		want, werr := Canonicalize([]byte(in))
		got, gerr := checksumRaw([]byte(in))
		if (werr != nil) != (gerr != nil) {
			t.Errorf("%q: checksumRaw error %v, Canonicalize error %v", in, gerr, werr)
			continue
		}
		if werr == nil && got != digest(want) {
			t.Errorf("%q: checksumRaw %s, digest of Canonicalize %s", in, got, digest(want))
		}
	}
}

// Encode writes resources one at a time; the result is the document and
// checksum of marshalling the whole map and indenting it.
func TestAppendResourcesMatchesWholeMap(t *testing.T) {
	big := map[string]*Resource{}
	for i := range 300 {
		r := &Resource{Kind: "K", Status: ResourceStatus(fmt.Sprint(i)), DesiredConfig: map[string]any{"n": json.Number(fmt.Sprint(i * 7)), "s": "<é\u2028>"}}
		normalizeResource(r)
		big[fmt.Sprintf("svc-%03d/c", i)] = r
	}
	odd := map[string]*Resource{"é/x": {}, "a<b/c": {}, "a/\u2028": {}, "bad\xff/x": {}, "bad\xef\xbf\xbd/y": {}}
	for _, r := range odd {
		normalizeResource(r)
	}
	for name, res := range map[string]map[string]*Resource{"empty": {}, "one": {"a/b": big["svc-001/c"]}, "300": big, "odd keys": odd} {
		raw, err := marshalCompact(res)
		if err != nil {
			t.Fatal(err)
		}
		wantSum, werr := checksumRaw(raw)
		got, sum, err := appendResources([]byte("x"), res, 1)
		if (werr != nil) != (err != nil) {
			t.Fatalf("%s: appendResources error %v, whole map %v", name, err, werr)
		}
		if err != nil {
			continue
		}
		if want := appendIndented([]byte("x"), raw, 1); !bytes.Equal(got, want) {
			t.Errorf("%s: appendResources wrote\n%s\nwant\n%s", name, got, want)
		}
		if sum != wantSum {
			t.Errorf("%s: checksum %s, of the whole map %s", name, sum, wantSum)
		}
	}
}

// Decode gives what a json.Decoder with UseNumber gives.
func TestDecodeMatchesUseNumber(t *testing.T) {
	docs := []string{
		`{"outputs":{"a":1.50,"b":[1e3,-0,{"c":null,"d":[]}],"e":{},"f":"\u00e9\n\ud83d\ude00","g":"caf` + "\xc3\xa9" + `","h":"bad` + "\xff" + `","i":true,"j":false,"a":2},` +
			`"resources":{"x/y":{"kind":"K","desired_config":{"n":12345678901234567890},"actual_state":null,"outputs":{"o":[[]]},` +
			`"inputs":{"dependencies":{"a/b":{"p":5432},"c/d":null}}},"x/z":null,"x/w":{"inputs":{}}}}`,
		`{"outputs":null,"resources":null}`,
		`{"resources":{"a":{"desired_config":5}}}`,
		`{"outputs":[1]}`,
		`{"outputs":"s"}`,
		`{"resources":{"a":{"inputs":{"dependencies":{"b":true}}}}}`,
	}
	for _, doc := range docs {
		var want State
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		dec.UseNumber()
		werr := dec.Decode(&want)
		var sj stateJSON
		gerr := json.Unmarshal([]byte(doc), &sj)
		if (werr != nil) != (gerr != nil) {
			t.Errorf("%s: error %v, with UseNumber %v", doc, gerr, werr)
			continue
		}
		if werr != nil {
			continue
		}
		if diff := cmp.Diff(&want, sj.state()); diff != "" {
			t.Errorf("%s (-UseNumber +Decode):\n%s", doc, diff)
		}
	}
}

// Every field of State that can hold arbitrary JSON (an interface value) is
// read through stateJSON; a new one must be added there.
func TestStateJSONShadowsEveryAnyField(t *testing.T) {
	var found []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		switch t.Kind() {
		case reflect.Interface:
			found = append(found, path)
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem(), path+"[]")
		case reflect.Map:
			walk(t.Elem(), path+"{}")
		case reflect.Struct:
			if seen[t] {
				return
			}
			seen[t] = true
			for i := range t.NumField() {
				walk(t.Field(i).Type, t.Name()+"."+t.Field(i).Name)
			}
		}
	}
	walk(reflect.TypeFor[State](), "State")
	want := []string{"ResolvedInputs.Dependencies{}{}", "Resource.ActualState{}", "Resource.DesiredConfig{}", "Resource.Outputs{}", "State.Outputs{}"}
	slices.Sort(found)
	if !slices.Equal(found, want) {
		t.Fatalf("fields holding arbitrary JSON: %v; stateJSON shadows %v: add the new ones to anyjson.go and here", found, want)
	}
}

func TestDecodeNamesAMistypedField(t *testing.T) {
	_, err := Decode([]byte(`{"format_version":"deployer-state-v1","resources":{"a/b":{"desired_config":"x"}},"outputs":{}}`), "s.json")
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("resources.desired_config")) {
		t.Fatalf("Decode of a string desired_config: %v, want an error naming resources.desired_config", err)
	}
	t.Log(err)
}

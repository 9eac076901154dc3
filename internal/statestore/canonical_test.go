package statestore

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCanonicalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{" {\n  \"z\" : [ 3 , {\"y\":null,\"x\":true} ],\t\"a\":\"s\" }\n", `{"a":"s","z":[3,{"x":true,"y":null}]}`},
		{`[12345678901234567890, 1.0, 1e3, -0.5E-7, 0]`, `[12345678901234567890,1.0,1e3,-0.5E-7,0]`},
		{`"<a & b>"`, `"<a & b>"`},
		{`"\u003ca\u0026b\u003e \u00e9 \/ \u2028"`, `"<a&b> é / \u2028"`},
		{`"tab\there \"q\" back\\slash"`, `"tab\there \"q\" back\\slash"`},
		{`{"é":1,"e":2,"\u0065a":3}`, `{"e":2,"ea":3,"é":1}`},
		{`{}`, `{}`},
		{`[]`, `[]`},
	}
	for _, c := range cases {
		got, err := Canonicalize([]byte(c.in))
		if err != nil {
			t.Errorf("Canonicalize(%s): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Canonicalize(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCanonicalizeRefusesInvalidJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1,}`, `{"a":1,"a":2}`, `[1 2]`, `01`, `1.`, `-`, `tru`, `"abc`, `{"a" 1}`, `{} x`, "\"a\x01\""} {
		if got, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("Canonicalize(%q) = %s, want an error", in, got)
		}
	}
}

// The canonical form of what encoding/json writes for a map is the same as
// for the same data in any key order and layout.
func TestChecksumIgnoresLayoutAndKeyOrder(t *testing.T) {
	v := map[string]any{"b": []any{json.Number("1.50"), "x<y"}, "a": map[string]any{"d": nil, "c": true}}
	sum, err := Checksum(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sum, "sha256:") || len(sum) != len("sha256:")+64 {
		t.Fatalf("Checksum = %q, want sha256:<64 hex>", sum)
	}
	same, err := checksumRaw([]byte("{\n  \"a\": {\"c\": true, \"d\": null},\n  \"b\": [1.50, \"x\\u003cy\"]\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if same != sum {
		t.Fatalf("checksum of the reformatted document %s, of the value %s", same, sum)
	}
	other, _ := Checksum(map[string]any{"b": []any{json.Number("1.5"), "x<y"}, "a": map[string]any{"d": nil, "c": true}})
	if other == sum {
		t.Fatal("1.50 and 1.5 have the same checksum: numbers must be kept as written")
	}
}

func TestAppendIndentedMatchesJSONIndent(t *testing.T) {
	src := `{"a":[],"b":{},"c":[1,{"d":"x,y:{[\\\"]}"}],"e":{"f":null}}`
	var want bytes.Buffer
	if err := json.Indent(&want, []byte(src), "  ", "  "); err != nil {
		t.Fatal(err)
	}
	if got := string(appendIndented(nil, []byte(src), 1)); got != want.String() {
		t.Fatalf("appendIndented:\n%s\njson.Indent:\n%s", got, want.String())
	}
}

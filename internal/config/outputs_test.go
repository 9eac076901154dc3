package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOutputsAreReadAsReferences(t *testing.T) {
	c, err := Parse([]byte(movedBase+"outputs:\n  db_url: \"${data/database.url}\"\n  cacheHost: ${storage/cache.endpoint.host}\n"), "deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Resolve("prod")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]OutputRef{"db_url": {Address: "data/database", Path: []string{"url"}},
		"cacheHost": {Address: "storage/cache", Path: []string{"endpoint", "host"}}}
	if diff := cmp.Diff(want, r.Outputs); diff != "" {
		t.Errorf("resolved outputs (-want +got):\n%s", diff)
	}
	v, ok := want["cacheHost"].Value(map[string]any{"endpoint": map[string]any{"host": "h"}})
	if !ok || v != "h" {
		t.Errorf("Value = %v, %v", v, ok)
	}
	if _, ok := want["cacheHost"].Value(map[string]any{"endpoint": "h"}); ok {
		t.Error("Value through a string should be missing")
	}
}

func TestOutputsProblems(t *testing.T) {
	tests := []struct{ name, outputs, want string }{
		{"not a reference", "  url: http://x\n", `outputs.url: want a reference to a component's output, "${SERVICE/COMPONENT.KEY}"`},
		{"no key", "  url: ${data/database}\n", "outputs.url: want a reference"},
		{"unknown component", "  url: ${data/databse.url}\n", `outputs.url: data/databse is not declared under services (did you mean "data/database"?)`},
		{"bad name", "  1url: ${data/database.url}\n", `invalid output name "1url"`},
		{"not a string", "  url: {a: b}\n", "outputs.url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(movedBase+"outputs:\n"+tc.outputs), "deployer.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

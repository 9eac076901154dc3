package plan

import "testing"

func TestInScopeTargetsAndExclusions(t *testing.T) {
	tests := []struct {
		scope string
		in    map[string]bool
	}{
		{"", map[string]bool{"app/api": true, "data/db": true}},
		{"app", map[string]bool{"app/api": true, "apps/x": false, "data/db": false}},
		{"app/api", map[string]bool{"app/api": true, "app/api2": false, "app/worker": false}},
		{"app/api,edge/cdn", map[string]bool{"app/api": true, "edge/cdn": true, "app/worker": false}},
		{"!data/db", map[string]bool{"app/api": true, "data/db": false, "data/cache": true}},
		{"app,!app/worker", map[string]bool{"app/api": true, "app/worker": false, "edge/cdn": false}},
		{"!data,!edge", map[string]bool{"app/api": true, "data/db": false, "edge/cdn": false}},
	}
	for _, tc := range tests {
		for addr, want := range tc.in {
			if got := InScope(addr, tc.scope); got != want {
				t.Errorf("InScope(%q, %q) = %v, want %v", addr, tc.scope, got, want)
			}
		}
		targets, exclude := ScopeTerms(tc.scope)
		if back := Scope(targets, exclude); back != tc.scope {
			t.Errorf("Scope(ScopeTerms(%q)) = %q", tc.scope, back)
		}
	}
}

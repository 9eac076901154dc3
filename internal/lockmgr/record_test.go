package lockmgr

import "testing"

func TestKeyFormatsAreSeed000s(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{StackKey("user-platform", "production"), "stack:user-platform:env:production"},
		{ServiceKey("user-platform", "production", "user-service"), "stack:user-platform:env:production:service:user-service"},
		{ComponentKey("user-platform", "production", "user-service", "api"), "stack:user-platform:env:production:component:user-service/api"},
		{CustomKey("nightly-sync"), "custom:nightly-sync"},
		{StackPrefix("user-platform"), "stack:user-platform:env:"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestConflictsFollowTheHierarchy(t *testing.T) {
	stack := StackKey("s", "e")
	svcA, svcB := ServiceKey("s", "e", "a"), ServiceKey("s", "e", "b")
	a1, a2, b1 := ComponentKey("s", "e", "a", "one"), ComponentKey("s", "e", "a", "two"), ComponentKey("s", "e", "b", "one")
	for _, c := range []struct {
		x, y string
		want bool
	}{
		{stack, stack, true},
		{stack, svcA, true},
		{stack, a1, true},
		{svcA, a1, true},
		{svcA, a2, true},
		{svcA, b1, false},
		{svcA, svcB, false},
		{a1, a2, false},
		{a1, b1, false},
		{a1, a1, true},
		{stack, StackKey("s", "ee"), false},
		{stack, ComponentKey("s", "ee", "a", "one"), false},
		{stack, ComponentKey("t", "e", "a", "one"), false},
		{stack, CustomKey("x"), false},
		{CustomKey("x"), CustomKey("x"), true},
	} {
		if got := Conflicts(c.x, c.y); got != c.want {
			t.Errorf("Conflicts(%q, %q) = %v, want %v", c.x, c.y, got, c.want)
		}
		if got := Conflicts(c.y, c.x); got != c.want {
			t.Errorf("Conflicts(%q, %q) = %v, want %v (symmetric)", c.y, c.x, got, c.want)
		}
	}
}

func TestParseKeyRefusesOtherShapes(t *testing.T) {
	for _, k := range []string{"", "stack:s", "stack:s:env", "stack:s:env:e:component:noslash", "stack:s:env:e:pod:x", "custom:", "lock:x"} {
		if _, ok := ParseKey(k); ok {
			t.Errorf("ParseKey(%q) accepted", k)
		}
	}
}

func TestHolderInGitHubActions(t *testing.T) {
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "12345", "GITHUB_SHA": "a1b2c3", "GITHUB_REF_NAME": "main", "GITHUB_ACTOR": "alice"}
	by, md := Holder(func(k string) string { return env[k] })
	if by != "github-actions-run-12345" || md.CISystem != "github-actions" || md.CIRunID != "12345" ||
		md.GitCommit != "a1b2c3" || md.GitBranch != "main" || md.User != "alice" || md.PID == 0 {
		t.Fatalf("Holder in GitHub Actions = %q %+v", by, md)
	}
	by, md = Holder(func(k string) string { return map[string]string{"USER": "bob"}[k] })
	if by != "bob@"+md.Hostname || md.CISystem != "" {
		t.Fatalf("Holder on a laptop = %q %+v", by, md)
	}
}

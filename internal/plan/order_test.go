package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/statestore"
)

func TestOrderIsTopologicalWithTiesByAddress(t *testing.T) {
	d := desired(
		comp("web/site", "Command", nil, "app/api", "app/worker"),
		comp("app/api", "Command", nil, "data/db"),
		comp("app/worker", "Command", nil, "data/db"),
		comp("data/db", "Command", nil),
		comp("aaa/standalone", "Command", nil),
	)
	p, err := Build(d, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "create aaa/standalone, create data/db, create app/api, create app/worker, create web/site"
	if got := addrs(p.Steps); got != want {
		t.Errorf("order:\n got %s\nwant %s", got, want)
	}
}

func TestDeletesRunDependentsFirst(t *testing.T) {
	st := state(map[string]*statestore.Resource{
		"data/db":    res("Command", nil),
		"app/api":    res("Command", nil, "data/db"),
		"web/site":   res("Command", nil, "app/api"),
		"zzz/other":  res("Command", nil),
		"app/worker": res("Command", nil, "data/db"),
	})
	d := desired(
		comp("data/db", "Command", nil),
		comp("app/api", "Command", nil, "data/db"),
		comp("web/site", "Command", nil, "app/api"),
		comp("zzz/other", "Command", nil),
		comp("app/worker", "Command", nil, "data/db"),
	)
	p, err := Build(d, st, Options{Destroy: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "delete app/worker, delete web/site, delete app/api, delete data/db, delete zzz/other"
	if got := addrs(p.Steps); got != want {
		t.Errorf("destroy order:\n got %s\nwant %s", got, want)
	}
	for _, s := range p.Steps {
		if s.Settings == nil || s.Config != nil {
			t.Errorf("%s: destroy of a configured component keeps its command and has no config: %+v", s.Address, s)
		}
	}
}

func TestRemovedComponentsDeleteAfterTheirDependentsStopUsingThem(t *testing.T) {
	// app/api drops its dependency on data/cache, which is removed: api is
	// updated first, then cache deleted. data/old-queue (removed) depended on
	// data/old-db (removed): the queue goes first.
	st := state(map[string]*statestore.Resource{
		"data/cache":     res("RDS", nil),
		"app/api":        res("MicroService", map[string]any{"v": 1}, "data/cache"),
		"data/old-db":    res("RDS", nil),
		"data/old-queue": res("RDS", nil, "data/old-db"),
	})
	d := desired(comp("app/api", "MicroService", map[string]any{"v": 2}), comp("app/new", "MicroService", nil, "app/api"))
	p, err := Build(d, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "delete data/old-queue, delete data/old-db, update app/api, delete data/cache, create app/new"
	if got := addrs(p.Steps); got != want {
		t.Errorf("order:\n got %s\nwant %s", got, want)
	}
}

func TestScopeFiltersSteps(t *testing.T) {
	d := desired(
		comp("app/api", "Command", map[string]any{"v": 2}),
		comp("app/worker", "Command", nil),
		comp("application/x", "Command", nil),
		comp("web/site", "Command", nil, "app/api"),
	)
	st := state(map[string]*statestore.Resource{
		"app/api":  res("Command", map[string]any{"v": 1}),
		"app/gone": res("Command", nil),
		"web/old":  res("Command", nil),
	})
	tests := []struct{ scope, want string }{
		{"", "delete app/gone, delete web/old, update app/api, create app/worker, create application/x, create web/site"},
		{"app", "delete app/gone, update app/api, create app/worker"},
		{"app/api", "update app/api"},
		{"web/site", "create web/site"},
		{"nothing", ""},
	}
	for _, tc := range tests {
		p, err := Build(d, st, Options{Scope: tc.scope})
		if err != nil {
			t.Fatal(err)
		}
		if got := addrs(p.Steps); got != tc.want {
			t.Errorf("scope %q:\n got %s\nwant %s", tc.scope, got, tc.want)
		}
		if p.Scope != tc.scope {
			t.Errorf("plan scope %q, want %q", p.Scope, tc.scope)
		}
	}
}

func TestSavedPlanRoundTrip(t *testing.T) {
	d := desired(comp("a/x", "MicroService", map[string]any{"n": 1, "password": "pw-123"}))
	st := state(map[string]*statestore.Resource{"a/x": res("MicroService", map[string]any{"n": 0}), "a/y": res("RDS", nil)})
	p, err := Build(d, st, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prod.plan")
	if err := WriteFile(path, p, nil); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "pw-123") {
		t.Errorf("saved plan contains a secret:\n%s", raw)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Lineage != p.Lineage || got.Serial != 7 || got.Stack != "shop" || got.Environment != "prod" || !got.CreatedAt.Equal(fixedNow()) {
		t.Errorf("read back header %+v", got)
	}
	if diff := cmp.Diff(addrs(p.Steps), addrs(got.Steps)); diff != "" || got.Summary != p.Summary {
		t.Errorf("steps (-want +got):\n%s\nsummary %+v", diff, got.Summary)
	}
	if len(got.Steps[1].Diffs) != 2 || got.Steps[1].Diffs[0].Path != "n" {
		t.Errorf("diffs of a/x after round trip: %+v", got.Steps[1].Diffs)
	}
}

func TestReadFileRefusesOtherFormats(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"old.plan":  `{"format_version":"deployer-plan-v0","steps":[]}`,
		"junk.plan": `terraform plan output`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), "deployer plan --out FILE") {
			t.Errorf("%s: err = %v, want a refusal that says how to make a plan", name, err)
		}
	}
	_, err := ReadFile(filepath.Join(dir, "old.plan"))
	if want := `format_version "deployer-plan-v0" is not "deployer-plan-v1"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to name both versions", err)
	}
}

// A saved plan passes every string through the masker: a value secret by
// its content (a DSN holding a known password, under a key that names no
// secret) is not written; numbers equal to a secret stay valid JSON.
func TestSavedPlanIsMaskedByContent(t *testing.T) {
	d := desired(comp("a/x", "MicroService", map[string]any{"dsn": "postgres://u:hunter2-xyz@db", "n": 4242}))
	st := state(map[string]*statestore.Resource{"a/x": res("MicroService", map[string]any{"n": 0})})
	p, err := Build(d, st, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	mask := strings.NewReplacer("hunter2-xyz", "***", "4242", "***").Replace
	path := filepath.Join(t.TempDir(), "prod.plan")
	if err := WriteFile(path, p, mask); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "hunter2-xyz") || !strings.Contains(string(raw), "postgres://u:***@db") || !strings.Contains(string(raw), "4242") {
		t.Errorf("saved plan:\n%s", raw)
	}
	if _, err := ReadFile(path); err != nil {
		t.Errorf("a masked plan should read back: %v", err)
	}
}

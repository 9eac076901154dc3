package planview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// planViewFixture: user-service/api created, database updated (with a
// secret), cache replaced, docs/old deleted, two components unchanged.
func planViewFixture(t *testing.T) *plan.Plan {
	t.Helper()
	c := func(addr, kind string, cfg map[string]any, deps ...string) *config.ResolvedComponent {
		svc, name, _ := strings.Cut(addr, "/")
		return &config.ResolvedComponent{Address: addr, Service: svc, Name: name, Kind: kind, Config: cfg, DependsOn: deps}
	}
	desired := &config.Resolved{Stack: "user-platform", Env: "production", Components: map[string]*config.ResolvedComponent{}}
	for _, rc := range []*config.ResolvedComponent{
		c("user-service/database", "RDS", map[string]any{"instance": map[string]any{"class": "db.r6g.xlarge"}, "master_password": "hunter2-new"}),
		c("user-service/cache", "ElastiCacheRedis", map[string]any{"engine": map[string]any{"version": "7.0"}}),
		c("user-service/api", "MicroService", map[string]any{"image": map[string]any{"tag": "v1.2.3"}, "apiKey": map[string]any{"secret": true, "value": "k-live-123"}}, "user-service/database"),
		c("docs/site", "Command", map[string]any{"title": "Users API"}),
		c("docs/search", "Command", map[string]any{}),
	} {
		desired.Components[rc.Address] = rc
	}
	r := func(kind string, cfg map[string]any) *statestore.Resource {
		return &statestore.Resource{Kind: kind, Status: "ready", DesiredConfig: cfg}
	}
	st := &statestore.State{Serial: 42, Lineage: "6f1c1b7e-1d9a-4b4e-9d3c-2f7f7a0e5b11", Resources: map[string]*statestore.Resource{
		"user-service/database": r("RDS", map[string]any{"instance": map[string]any{"class": "db.t4g.medium"}, "master_password": "hunter2-old"}),
		"user-service/cache":    r("ElastiCacheRedis", map[string]any{"engine": map[string]any{"version": "6.2"}}),
		"docs/site":             r("Command", map[string]any{"title": "Users API"}),
		"docs/search":           r("Command", map[string]any{}),
		"docs/old":              r("Command", map[string]any{"token": "tok-old-999"}),
	}}
	replaceOn := func(kind string) []string {
		if kind == "ElastiCacheRedis" {
			return []string{"engine.version"}
		}
		return nil
	}
	p, err := plan.Build(desired, st, plan.Options{ReplaceOn: replaceOn, Now: func() time.Time { return time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var planViewSecrets = []string{"hunter2", "k-live-123", "tok-old-999"}

func TestPlanViewHuman(t *testing.T) {
	var out bytes.Buffer
	if err := NewHuman(false, nil).Render(&out, planViewFixture(t)); err != nil {
		t.Fatal(err)
	}
	want := `docs
  - old (Command) delete
user-service
  ± cache (ElastiCacheRedis) replace
      ~ engine.version: "6.2" -> "7.0"  # forces replacement
  ~ database (RDS) update
      ~ instance.class: "db.t4g.medium" -> "db.r6g.xlarge"
      ~ master_password: (sensitive) -> (sensitive)
  + api (MicroService) create
      + apiKey: (sensitive)
      + image.tag: "v1.2.3"

Plan: 1 to create, 1 to update, 1 to replace, 1 to delete, 2 unchanged.
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Errorf("color=false output has ANSI escapes")
	}
}

func TestPlanViewHumanColor(t *testing.T) {
	var out bytes.Buffer
	if err := NewHuman(true, nil).Render(&out, planViewFixture(t)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\x1b[") {
		t.Errorf("color=true output has no ANSI escapes:\n%s", out.String())
	}
	plain := stripANSI(out.String())
	var want bytes.Buffer
	NewHuman(false, nil).Render(&want, planViewFixture(t))
	if diff := cmp.Diff(want.String(), plain); diff != "" {
		t.Errorf("coloured output differs from plain output in more than colour (-plain +coloured):\n%s", diff)
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestPlanViewNoChanges(t *testing.T) {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Steps: []plan.Step{{Address: "a/x", Service: "a", Component: "x", Kind: "RDS", Action: plan.NoOp}}, Summary: plan.Summary{NoOp: 1}}
	var out bytes.Buffer
	if err := NewHuman(true, nil).Render(&out, p); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "No changes. Infrastructure matches the configuration.\n" {
		t.Errorf("output = %q", got)
	}
}

func TestPlanViewJSON(t *testing.T) {
	var out bytes.Buffer
	if err := NewJSON().Render(&out, planViewFixture(t)); err != nil {
		t.Fatal(err)
	}
	want := `{
  "format_version": "deployer-plan-v1",
  "stack": "user-platform",
  "environment": "production",
  "lineage": "6f1c1b7e-1d9a-4b4e-9d3c-2f7f7a0e5b11",
  "serial": 42,
  "scope": "",
  "destroy": false,
  "steps": [
    {
      "address": "docs/old",
      "service": "docs",
      "component": "old",
      "kind": "Command",
      "action": "delete"
    },
    {
      "address": "docs/search",
      "service": "docs",
      "component": "search",
      "kind": "Command",
      "action": "no-op"
    },
    {
      "address": "docs/site",
      "service": "docs",
      "component": "site",
      "kind": "Command",
      "action": "no-op",
      "config": {
        "title": "Users API"
      }
    },
    {
      "address": "user-service/cache",
      "service": "user-service",
      "component": "cache",
      "kind": "ElastiCacheRedis",
      "action": "replace",
      "diffs": [
        {
          "path": "engine.version",
          "old": "6.2",
          "new": "7.0",
          "op": "change",
          "forces_replacement": true
        }
      ],
      "config": {
        "engine": {
          "version": "7.0"
        }
      }
    },
    {
      "address": "user-service/database",
      "service": "user-service",
      "component": "database",
      "kind": "RDS",
      "action": "update",
      "diffs": [
        {
          "path": "instance.class",
          "old": "db.t4g.medium",
          "new": "db.r6g.xlarge",
          "op": "change"
        },
        {
          "path": "master_password",
          "old": "(sensitive)",
          "new": "(sensitive)",
          "op": "change",
          "sensitive": true
        }
      ],
      "config": {
        "instance": {
          "class": "db.r6g.xlarge"
        },
        "master_password": "(sensitive)"
      }
    },
    {
      "address": "user-service/api",
      "service": "user-service",
      "component": "api",
      "kind": "MicroService",
      "action": "create",
      "diffs": [
        {
          "path": "apiKey",
          "new": "(sensitive)",
          "op": "add",
          "sensitive": true
        },
        {
          "path": "image.tag",
          "new": "v1.2.3",
          "op": "add"
        }
      ],
      "depends_on": [
        "user-service/database"
      ],
      "inputs_from": [
        "user-service/database"
      ],
      "config": {
        "apiKey": "(sensitive)",
        "image": {
          "tag": "v1.2.3"
        }
      }
    }
  ],
  "summary": {
    "create": 1,
    "update": 1,
    "replace": 1,
    "delete": 1,
    "no_op": 2,
    "reevaluate": 0
  },
  "created_at": "2024-05-01T12:00:00Z"
}
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

func TestPlanViewNeverPrintsSecrets(t *testing.T) {
	p := planViewFixture(t)
	// A plan built elsewhere, with unmasked values in its diffs, is masked too.
	p.Steps = append(p.Steps, plan.Step{Address: "x/y", Service: "x", Component: "y", Kind: "RDS", Action: plan.Update, Diffs: []plan.FieldDiff{
		{Path: "db", Old: map[string]any{"password": "hunter2-raw"}, New: map[string]any{"password": "hunter2-raw2"}, Op: plan.OpChange},
		{Path: "custom", Old: "k-live-123", New: "k-live-123x", Op: plan.OpChange, Sensitive: true},
	}})
	p.Summary.Update++
	for name, r := range map[string]Renderer{"human": NewHuman(false, nil), "color": NewHuman(true, nil), "json": NewJSON()} {
		var out bytes.Buffer
		if err := r.Render(&out, p); err != nil {
			t.Fatal(err)
		}
		for _, s := range planViewSecrets {
			if strings.Contains(out.String(), s) {
				t.Errorf("%s output contains the secret %q:\n%s", name, s, out.String())
			}
		}
		if name == "json" && !json.Valid(out.Bytes()) {
			t.Errorf("JSON renderer wrote invalid JSON")
		}
	}
	if p.Steps[len(p.Steps)-1].Diffs[1].Old != "k-live-123" {
		t.Errorf("rendering changed the plan it was given")
	}
}

// A replace across engines says, in the human plan, which engine deletes the existing instance and what that delete runs.
func TestPlanViewReplaceAcrossEngines(t *testing.T) {
	runs := "./down.sh"
	p := &plan.Plan{Stack: "s", Environment: "dev", Summary: plan.Summary{Replace: 1}, Steps: []plan.Step{{
		Address: "app/thing", Service: "app", Component: "thing", Kind: "PulumiResource", Action: plan.Replace,
		Diffs:     []plan.FieldDiff{{Path: plan.PathKind, Old: "Command", New: "PulumiResource", Op: plan.OpChange, ForcesReplacement: true}},
		DeletedBy: "command", Runs: &runs,
	}}}
	var out bytes.Buffer
	if err := NewHuman(false, nil).Render(&out, p); err != nil {
		t.Fatal(err)
	}
	want := `app
  ± thing (PulumiResource) replace
      ~ (kind): "Command" -> "PulumiResource"  # forces replacement
      the command engine deletes the existing Command first, then the new PulumiResource is created
      delete runs: ./down.sh
`
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("human plan:\n%s\nwant it to start with:\n%s", out.String(), want)
	}
}

// applyOrderPlan updates zeta/net, which app/db reads, which app/api
// reads, and a/late, which reads app/api: apply order is not name order.
func applyOrderPlan() *plan.Plan {
	step := func(svc, name string, a plan.Action, from ...string) plan.Step {
		return plan.Step{Address: svc + "/" + name, Service: svc, Component: name, Kind: "Command", Action: a,
			Reevaluate: len(from) > 0, InputsFrom: from}
	}
	net := step("zeta", "net", plan.Update)
	net.Diffs = []plan.FieldDiff{{Path: "cidr", Op: plan.OpChange, Old: "10.0.0.0/16", New: "10.1.0.0/16"}}
	return &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "shop", Environment: "dev", Steps: []plan.Step{
		net, step("app", "db", plan.NoOp, "zeta/net"), step("app", "api", plan.NoOp, "app/db"), step("a", "late", plan.NoOp, "app/api"),
	}, Summary: plan.Summary{Update: 1, NoOp: 3, Reevaluate: 3}}
}

// The tree follows the apply order (a service's header again when another
// service's step came between) and marks a re-evaluation ? and an update ~,
// in plain text and in colour.
func TestPlanViewHumanApplyOrderAndReevaluateMarker(t *testing.T) {
	var out, color bytes.Buffer
	if err := NewHuman(false, nil).Render(&out, applyOrderPlan()); err != nil {
		t.Fatal(err)
	}
	want := `zeta
  ~ net (Command) update
      ~ cidr: "10.0.0.0/16" -> "10.1.0.0/16"
app
  ? db (Command) inputs from zeta/net may change
  ? api (Command) inputs from app/db may change
a
  ? late (Command) inputs from app/api may change

Plan: 0 to create, 1 to update, 0 to replace, 0 to delete, 3 to re-evaluate, 0 unchanged.
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if err := NewHuman(true, nil).Render(&color, applyOrderPlan()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"\x1b[33m~\x1b[0m net", "\x1b[36m?\x1b[0m db"} {
		if !strings.Contains(color.String(), w) {
			t.Errorf("coloured output lacks %q:\n%q", w, color.String())
		}
	}
	if diff := cmp.Diff(want, stripANSI(color.String())); diff != "" {
		t.Errorf("coloured output differs from plain output in more than colour (-plain +coloured):\n%s", diff)
	}
}

// Changes to Outputs follow the counts, one line per output: an output of a
// changed component goes from its old value to (known after apply), a
// secret one from (sensitive); a plan whose only change is to outputs is
// not "No changes".
func TestPlanViewChangesToOutputs(t *testing.T) {
	p := &plan.Plan{Stack: "s", Environment: "dev", Summary: plan.Summary{NoOp: 1},
		Steps: []plan.Step{{Address: "app/api", Service: "app", Component: "api", Kind: "Command", Action: plan.NoOp}},
		Outputs: []plan.FieldDiff{
			{Path: "api_token", Op: plan.OpChange, Old: "tok-1", New: plan.KnownAfterApply, Sensitive: true, Unknown: true},
			{Path: "api_url", Op: plan.OpChange, Old: "http://a", New: plan.KnownAfterApply, Unknown: true},
			{Path: "limits", Op: plan.OpRemove, Old: map[string]any{"rps": 5}},
		}}
	var out bytes.Buffer
	if err := NewHuman(false, nil).Render(&out, p); err != nil {
		t.Fatal(err)
	}
	want := "\nPlan: 0 to create, 0 to update, 0 to replace, 0 to delete, 1 unchanged.\n\nChanges to Outputs:\n" +
		"  ~ api_token = (sensitive) -> (known after apply)\n" +
		"  ~ api_url = \"http://a\" -> (known after apply)\n" +
		"  - limits = {\"rps\":5}\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

package pulumi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// userPlatform returns the components of examples/user-platform for env,
// with the environment's overrides deep-merged as deployer does.
func userPlatform(t *testing.T, env string) []Component {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "user-platform", "deployer.yaml"))
	if err != nil {
		t.Fatalf("read the example: %v", err)
	}
	var doc struct {
		Services map[string]struct {
			Components map[string]struct {
				Kind         string                    `yaml:"kind"`
				DependsOn    []string                  `yaml:"depends_on"`
				Config       map[string]any            `yaml:"config"`
				Environments map[string]map[string]any `yaml:"environments"`
			} `yaml:"components"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var comps []Component
	for _, svc := range keys(doc.Services) {
		for _, name := range keys(doc.Services[svc].Components) {
			c := doc.Services[svc].Components[name]
			var deps []string
			for _, d := range c.DependsOn {
				if !strings.Contains(d, "/") {
					d = svc + "/" + d
				}
				deps = append(deps, d)
			}
			comps = append(comps, Component{Address: svc + "/" + name, Kind: c.Kind, DependsOn: deps,
				Config: merge(c.Config, c.Environments[env])})
		}
	}
	return comps
}

func merge(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = merge(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func TestUserPlatformRegistersSeedResources(t *testing.T) {
	for _, env := range []string{"production", "staging"} {
		t.Run(env, func(t *testing.T) {
			comps := userPlatform(t, env)
			if len(comps) != 3 {
				t.Fatalf("example has %d components, want database, cache and api", len(comps))
			}
			regs, values := run(t, &mocks{}, "user-platform", env, comps, nil)
			golden(t, "user-platform-"+env+".resources.json", regs)
			golden(t, "user-platform-"+env+".state.json", values)
		})
	}
}

func TestUserPlatformShapesMatchSeed(t *testing.T) {
	regs, values := run(t, &mocks{}, "user-platform", "production", userPlatform(t, "production"), nil)
	byName := map[string]registration{}
	for _, r := range regs {
		byName[r.Type+"::"+r.Name] = r
	}
	for _, r := range regs {
		if strings.HasPrefix(r.Type, ComponentType) {
			t.Errorf("registered %s %s: deployer registers no resource of its own", r.Type, r.Name)
		}
		if r.Parent != "urn:pulumi:production::user-platform::pulumi:pulumi:Stack::user-platform-production" {
			t.Errorf("%s %s has parent %q, want the stack", r.Type, r.Name, r.Parent)
		}
	}
	// Every resource of the api waits for the database and cache resources (depends_on).
	want := []string{
		"urn:pulumi:production::user-platform::aws:elasticache/replicationGroup:ReplicationGroup::user-service-cache",
		"urn:pulumi:production::user-platform::aws:rds/instance:Instance::user-service-database",
	}
	for _, tok := range []string{"aws:ecs/taskDefinition:TaskDefinition", "aws:lb/targetGroup:TargetGroup", "aws:ecs/service:Service"} {
		api, ok := byName[tok+"::user-service-api"]
		if !ok {
			t.Fatalf("no %s user-service-api among %d registrations", tok, len(regs))
		}
		for _, w := range want {
			if !slices.Contains(api.DependsOn, w) {
				t.Errorf("api %s depends on %v, want %s among them", tok, api.DependsOn, w)
			}
		}
	}
	db := byName["aws:rds/instance:Instance::user-service-database"]
	if db.Inputs["instanceClass"] != "db.r6g.xlarge" || db.Inputs["allocatedStorage"] != 100.0 {
		t.Errorf("RDS inputs %v do not carry instance.class and storage.allocatedGB", db.Inputs)
	}

	dbv := values["user-service/database"].(map[string]any)
	info := dbv["pulumi"].(map[string]any)
	if info["urn"] != "urn:pulumi:production::user-platform::aws:rds/instance:Instance::user-service-database" || info["id"] != "user-db-prod" {
		t.Errorf("database pulumi = %v, want the instance's urn and id", info)
	}
	if got := dbv["outputs"].(map[string]any)["port"]; got != "5432" {
		t.Errorf("database outputs.port = %#v, want \"5432\" (a string)", got)
	}
	apiv := values["user-service/api"].(map[string]any)
	urns, _ := apiv["pulumi"].(map[string]any)["urns"].([]any)
	if len(urns) != 5 {
		t.Errorf("api pulumi.urns = %v, want the 5 children (the multi-resource shape)", urns)
	}
}

// TestPulumiResourceAndStackReference: a StackReference (applied by its own
// engine) reaches a Pulumi program as the outputs of an external component.
func TestPulumiResourceAndStackReference(t *testing.T) {
	m := &mocks{}
	comps := []Component{
		{Address: "app/pet", Kind: "PulumiResource", DependsOn: []string{"upstream/base", "site/page"}, Config: map[string]any{
			"type": "random:index/randomPet:RandomPet",
			"properties": map[string]any{
				"prefix":    "${upstream/base.outputs.base/pet.id}",
				"length":    2,
				"keepers":   map[string]any{"title": "${site/page.title}"},
				"separator": "-",
			},
		}},
	}
	external := map[string]map[string]any{"site/page": {"title": "Users API"}, "upstream/base": {
		"stack": "organization/pulumi-local-base/dev",
		"outputs": map[string]any{
			"base/pet": map[string]any{"id": "happy-pet"},
			"base/db":  map[string]any{"password": map[string]any{"secret": true, "value": "hunter2"}},
		},
	}}
	regs, values := run(t, m, "pulumi-local-app", "dev", comps, external)
	golden(t, "pulumi-local-app.resources.json", regs)
	golden(t, "pulumi-local-app.state.json", values)

	for _, r := range regs {
		switch r.Type {
		case "random:index/randomPet:RandomPet":
			if r.Inputs["prefix"] != "happy-pet" {
				t.Errorf("pet prefix = %v, want the referenced stack's output happy-pet", r.Inputs["prefix"])
			}
			if r.Inputs["keepers"].(map[string]any)["title"] != "Users API" {
				t.Errorf("pet keepers = %v, want the Command component's output", r.Inputs["keepers"])
			}
		}
	}
}

func TestDeclareErrors(t *testing.T) {
	cases := []struct {
		name  string
		comps []Component
		want  string
	}{
		{"cycle", []Component{
			{Address: "a/x", Kind: "PulumiResource", DependsOn: []string{"a/y"}, Config: map[string]any{"type": "random:index/randomPet:RandomPet"}},
			{Address: "a/y", Kind: "PulumiResource", DependsOn: []string{"a/x"}, Config: map[string]any{"type": "random:index/randomPet:RandomPet"}},
		}, "dependency cycle: a/x -> a/y -> a/x"},
		{"name clash", []Component{
			{Address: "a-b/c", Kind: "PulumiResource", Config: map[string]any{"type": "random:index/randomPet:RandomPet"}},
			{Address: "a/b-c", Kind: "PulumiResource", Config: map[string]any{"type": "random:index/randomPet:RandomPet"}},
		}, `both map to the Pulumi name "a-b-c"`},
		{"bad token", []Component{{Address: "a/x", Kind: "PulumiResource", Config: map[string]any{"type": "RandomPet"}}},
			`config type "RandomPet" is not a resource type token`},
		{"missing class", []Component{{Address: "a/db", Kind: "RDS", Config: map[string]any{}}},
			"a/db: config instance.class is required"},
		{"unknown ref", []Component{{Address: "a/x", Kind: "PulumiResource", Config: map[string]any{
			"type": "random:index/randomPet:RandomPet", "properties": map[string]any{"prefix": "${b/y.id}"}}}},
			"${b/y.id} names no component"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := pulumiRunErr(tc.comps)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestComponentsKeepsAppliedConfigAndDropsDeletes(t *testing.T) {
	applied := map[string]any{"type": "random:index/randomPet:RandomPet", "properties": map[string]any{"length": 1}}
	keep := []plan.Step{
		{Address: "a/kept", Kind: "PulumiResource", Action: plan.NoOp, Config: map[string]any{"type": "x:y:Z"},
			Prior: &statestore.Resource{DesiredConfig: applied}},
		{Address: "docs/site", Kind: "Command", Action: plan.NoOp},
	}
	apply := []plan.Step{
		{Address: "a/new", Kind: "RDS", Action: plan.Create, Config: map[string]any{"instance": map[string]any{"class": "db.t4g.micro"}}},
		{Address: "a/gone", Kind: "RDS", Action: plan.Delete},
	}
	got := Components(keep, apply)
	var addrs []string
	for _, c := range got {
		addrs = append(addrs, c.Address)
	}
	if strings.Join(addrs, ",") != "a/kept,a/new" {
		t.Fatalf("components = %v, want a/kept and a/new (no Command, no deleted)", addrs)
	}
	if got[0].Config["type"] != "random:index/randomPet:RandomPet" {
		t.Errorf("kept component config = %v, want the config last applied (state), not the new desired one", got[0].Config)
	}
}

func TestReplaceOnAndIsPulumiKind(t *testing.T) {
	for _, k := range []string{"RDS", "ElastiCacheRedis", "MicroService", "PulumiResource"} {
		if !IsPulumiKind(k) {
			t.Errorf("IsPulumiKind(%q) = false", k)
		}
	}
	for _, k := range []string{"Command", "StackReference"} {
		if IsPulumiKind(k) {
			t.Errorf("%s must not need Pulumi", k)
		}
	}
	if got := ReplaceOn("RDS"); !contains(got, "engine.type") {
		t.Errorf("ReplaceOn(RDS) = %v, want engine.type", got)
	}
	if ReplaceOn("Command") != nil {
		t.Error("ReplaceOn(Command) should be nil")
	}
}

func contains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// TestDependsOnComponentIsDeterministic runs the program repeatedly: a
// dependency on a component must reach the engine every time, whether or not
// the component's children were recorded by the SDK before the dependent
// registered.
func TestDependsOnComponentIsDeterministic(t *testing.T) {
	comps := []Component{
		{Address: "upstream/base", Kind: "PulumiResource", Config: map[string]any{"type": "random:index/randomPet:RandomPet"}},
		{Address: "app/pet", Kind: "PulumiResource", DependsOn: []string{"upstream/base"},
			Config: map[string]any{"type": "random:index/randomPet:RandomPet"}},
	}
	want := "urn:pulumi:dev::p::random:index/randomPet:RandomPet::upstream-base"
	for i := 0; i < 100; i++ {
		regs, _ := run(t, &mocks{}, "p", "dev", comps, nil)
		for _, r := range regs {
			if r.Name == "app-pet" && strings.Join(r.DependsOn, " ") != want {
				t.Fatalf("run %d: app-pet depends on %v, want [%s]", i, r.DependsOn, want)
			}
		}
	}
}

// Values secret by their key name, or written {secret: true, value: X},
// reach Pulumi marked secret, so its backend stores them encrypted; a
// MicroService's secret environment value is written as its value, never
// as the text of the wrapper.
func TestSecretsReachPulumiMarked(t *testing.T) {
	m := &mocks{}
	comps := []Component{
		{Address: "app/pw", Kind: "PulumiResource", Config: map[string]any{
			"type": "random:index/randomPassword:RandomPassword",
			"properties": map[string]any{
				"length":    16,
				"apiKey":    "ak-plain-by-key-name",
				"overrides": map[string]any{"db_password": "nested-by-key-name", "note": "plain"},
				"marked":    map[string]any{"secret": true, "value": "marked-value"},
			},
		}},
		{Address: "app/svc", Kind: "MicroService", Config: map[string]any{
			"image": map[string]any{"repository": "nginx", "tag": "1"}, "port": 80,
			"environment": map[string]any{"LOG_LEVEL": "info", "API_TOKEN": "tok-by-key-name", "DSN": map[string]any{"secret": true, "value": "postgres://u:p@h"}},
		}},
	}
	regs, _ := run(t, m, "secrets", "dev", comps, nil)
	seen := map[string]bool{}
	for _, r := range regs {
		switch r.Type {
		case "random:index/randomPassword:RandomPassword":
			seen[r.Type] = true
			if d := cmp.Diff([]string{"apiKey", "marked", "overrides"}, r.Secret); d != "" {
				t.Errorf("secret inputs (-want +got):\n%s", d)
			}
		case "aws:ecs/taskDefinition:TaskDefinition":
			seen[r.Type] = true
			raw, _ := json.Marshal(r.Inputs["containerDefinitions"]) // a secret: Pulumi's envelope around the text
			defs := string(raw)
			if !strings.Contains(defs, `\"value\":\"postgres://u:p@h\"`) || strings.Contains(defs, "map[") || !strings.Contains(defs, "tok-by-key-name") {
				t.Errorf("container definitions: %s", defs)
			}
			if !slices.Contains(r.Secret, "containerDefinitions") {
				t.Errorf("container definitions with secret values should be secret: %v", r.Secret)
			}
		}
	}
	if len(seen) != 2 {
		t.Fatalf("registered %v", regs)
	}
}

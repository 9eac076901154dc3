package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const goodYAML = `stack: user-platform
backend:
  state: s3://company-deployer-state?region=us-east-1
  lock: dynamodb://deployer-state-locks?region=us-east-1
  heartbeat_interval: 10s
environments:
  production: {config: {aws:region: us-east-1}}
  staging: {}
services:
  user-service:
    components:
      database:
        kind: RDS
        config: {engine: {type: postgres, version: "15.4"}, instance: {class: db.r6g.xlarge, storage: {allocatedGB: 100}}}
      api:
        kind: MicroService
        depends_on: [database]
        config: {image: {tag: v1.2.3}, scaling: {minReplicas: 2, maxReplicas: 10}, ports: [80, 443], ratio: 0.5, public: true}
        environments: {production: {scaling: {minReplicas: 5}}}
  docs:
    components:
      site:
        kind: Command
        depends_on: [user-service/api]
        command: {create: ./render.sh, delete: rm -rf out}
`

func TestLoadGoodFileAppliesDefaults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "deployer.yaml")
	if err := os.WriteFile(path, []byte(goodYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != path || c.Dir != dir {
		t.Errorf("Path, Dir = %q, %q; want %q, %q", c.Path, c.Dir, path, dir)
	}
	want := Backend{
		State: "s3://company-deployer-state?region=us-east-1", Lock: "dynamodb://deployer-state-locks?region=us-east-1",
		LockTTL: time.Hour, HeartbeatInterval: 10 * time.Second, StaleAfter: 2 * time.Minute, MaxClockSkew: 30 * time.Second,
	}
	if diff := cmp.Diff(want, c.Backend); diff != "" {
		t.Errorf("backend (-want +got):\n%s", diff)
	}
	if c.Pulumi.SecretsProvider != "passphrase" {
		t.Errorf("secrets_provider = %q, want the default passphrase", c.Pulumi.SecretsProvider)
	}
	site := c.Services["docs"].Components["site"]
	if n := site.Sections["command"]; n == nil || n.Line != 25 || site.Settings["command"]["create"] != "./render.sh" {
		t.Errorf("command section %v settings %v, want line 25 and create ./render.sh as written", n, site.Settings)
	}
	api := c.Services["user-service"].Components["api"]
	wantCfg := map[string]any{
		"image": map[string]any{"tag": "v1.2.3"}, "scaling": map[string]any{"minReplicas": 2, "maxReplicas": 10},
		"ports": []any{80, 443}, "ratio": 0.5, "public": true,
	}
	if diff := cmp.Diff(wantCfg, api.Config); diff != "" {
		t.Errorf("api config (-want +got):\n%s", diff)
	}
	if got := c.Environments["production"].Config["aws:region"]; got != "us-east-1" {
		t.Errorf("environments.production.config[aws:region] = %v", got)
	}
}

func TestLoadMinimalFileGetsFileBackends(t *testing.T) {
	c, err := Parse([]byte("stack: s\nenvironments: {dev: }\n"), "deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend.State != "file://.deployer" || c.Backend.Lock != "file://.deployer" {
		t.Errorf("backends = %q, %q; want file://.deployer for both", c.Backend.State, c.Backend.Lock)
	}
	if _, ok := c.Environments["dev"]; !ok {
		t.Errorf("environment dev with no body was dropped")
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "deployer.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, ErrNoConfig) {
		t.Errorf("err = %v, want os.ErrNotExist and ErrNoConfig wrapped", err)
	}
	if !strings.Contains(err.Error(), "deployer init") {
		t.Errorf("err = %v, want the remedy (deployer init)", err)
	}
}

func TestInitLoads(t *testing.T) {
	c, err := Parse(Init(), "deployer.yaml")
	if err != nil {
		t.Fatalf("the starter file of deployer init does not load: %v", err)
	}
	r, err := c.Resolve("prod")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Components["hello/message"].Config["text"]; got != "hello, production" {
		t.Errorf("prod text = %v, want the override", got)
	}
	if _, err := c.Resolve("dev"); err != nil {
		t.Errorf("deployer init suggests plan -e dev: %v", err)
	}
}

// bad returns a minimal valid file with extra appended under services.
func badFile(services string) string {
	return "stack: s\nenvironments:\n  prod: {}\n  dev: {}\nservices:\n" + services
}

func TestLoadReportsProblems(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"malformed YAML", "stack: s\nservices:\n  a: [\n", []string{
			`deployer.yaml:3: invalid YAML: did not find expected node content (check the indentation and quoting on this line and the one before)`}},
		{"tab indentation", "stack: s\nbackend:\n\tstate: x\n", []string{
			`deployer.yaml:3: invalid YAML: found character that cannot start any token (check the indentation and quoting on this line and the one before)`}},
		{"empty", "", []string{
			`deployer.yaml: the file is empty (write stack:, environments: and services:, or run deployer init for a starter file)`}},
		{"not a mapping", "- a\n- b\n", []string{
			`deployer.yaml:1: the top level must be a mapping with stack:, backend:, pulumi:, environments: and services:`}},
		{"unknown top-level key", "stack: s\nservics: {}\n", []string{
			`deployer.yaml:2: servics: unknown key (did you mean "services"?)`}},
		{"unknown top-level key, nothing close", "stack: s\nfoo: 1\n", []string{
			`deployer.yaml:2: foo: unknown key (allowed: stack, backend, pulumi, parallelism, environments, services, shared, metrics, policy, moved, outputs)`}},
		{"unknown backend key", "backend:\n  lok: none\n", []string{
			`deployer.yaml:2: backend.lok: unknown key (did you mean "lock"?)`}},
		{"duplicate key", "stack: a\nstack: b\n", []string{
			`deployer.yaml:2: stack: duplicate key (first defined on line 1; remove one)`}},
		{"bad stack name", "stack: User_Platform\n", []string{
			`deployer.yaml:1: stack: invalid name "User_Platform": names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters`}},
		{"bad environment name", "environments:\n  Prod: {}\n", []string{
			`deployer.yaml:2: environments.Prod: invalid environment name "Prod": names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters`}},
		{"bad service and component names", badFile("  a:b:\n    components:\n      ../x: {kind: RDS}\n"), []string{
			"deployer.yaml has 2 problems:",
			`  deployer.yaml:6: services.a:b: invalid service name "a:b": names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters`,
			`  deployer.yaml:8: services.a:b.components.../x: invalid component name "../x": names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters`}},
		{"kind missing", badFile("  a:\n    components:\n      db: {config: {x: 1}}\n"), []string{
			`deployer.yaml:8: services.a.components.db.kind: kind is required (one of Command, ElastiCacheRedis, MicroService, PulumiResource, RDS, StackReference)`}},
		{"kind unknown, close", badFile("  a:\n    components:\n      db: {kind: Rds}\n"), []string{
			`deployer.yaml:8: services.a.components.db.kind: unknown kind "Rds" (did you mean "RDS"?)`}},
		{"kind unknown", badFile("  a:\n    components:\n      db: {kind: Lambda}\n"), []string{
			`deployer.yaml:8: services.a.components.db.kind: unknown kind "Lambda" (known kinds: Command, ElastiCacheRedis, MicroService, PulumiResource, RDS, StackReference)`}},
		{"Command without create", badFile("  a:\n    components:\n      job:\n        kind: Command\n        command: {delete: rm x}\n"), []string{
			`deployer.yaml:10: services.a.components.job.command.create: kind Command needs command.create (the shell command that creates it, run in the directory of deployer.yaml)`}},
		{"Command without command", badFile("  a:\n    components:\n      job: {kind: Command}\n"), []string{
			`deployer.yaml:8: services.a.components.job.command.create: kind Command needs command.create (the shell command that creates it, run in the directory of deployer.yaml)`}},
		{"command on a cloud kind", badFile("  a:\n    components:\n      db:\n        kind: RDS\n        command: {create: x}\n"), []string{
			`deployer.yaml:10: services.a.components.db.command: command is only allowed for kind Command (kind RDS is applied by Pulumi; remove command)`}},
		{"unknown component key", badFile("  a:\n    components:\n      db:\n        kind: RDS\n        dependson: [x]\n"), []string{
			`deployer.yaml:10: services.a.components.db.dependson: unknown key (did you mean "depends_on"?)`}},
		{"depends_on unknown, did you mean", badFile("  user-service:\n    components:\n      database: {kind: RDS}\n      api:\n        kind: MicroService\n        depends_on:\n          - databse\n"), []string{
			`deployer.yaml:12: services.user-service.components.api.depends_on[0]: unknown component "databse" (did you mean "database"?)`}},
		{"depends_on unknown full path", badFile("  a:\n    components:\n      db: {kind: RDS}\n  b:\n    components:\n      api: {kind: RDS, depends_on: [a/dbb, c/db]}\n"), []string{
			"deployer.yaml has 2 problems:",
			`  deployer.yaml:11: services.b.components.api.depends_on[0]: unknown component "a/dbb" (did you mean "a/db"?)`,
			`  deployer.yaml:11: services.b.components.api.depends_on[1]: unknown component "c/db" (did you mean "a/db"?)`}},
		{"depends_on self", badFile("  a:\n    components:\n      db: {kind: RDS, depends_on: [db]}\n"), []string{
			`deployer.yaml:8: services.a.components.db.depends_on[0]: a component cannot depend on itself (remove "db")`}},
		{"depends_on malformed", badFile("  a:\n    components:\n      db: {kind: RDS, depends_on: [x/y/z]}\n"), []string{
			`deployer.yaml:8: services.a.components.db.depends_on[0]: "x/y/z" is not a component: write NAME for a component of the same service or SERVICE/NAME`}},
		{"depends_on not a list", badFile("  a:\n    components:\n      db: {kind: RDS, depends_on: x}\n"), []string{
			`deployer.yaml:8: services.a.components.db.depends_on: want a list such as [a, b], found "x"`}},
		{"cycle", badFile("  a:\n    components:\n      x: {kind: RDS, depends_on: [y]}\n      y: {kind: RDS, depends_on: [z]}\n      z: {kind: RDS, depends_on: [x]}\n"), []string{
			`deployer.yaml:8: services.a.components.x.depends_on: dependency cycle: a/x -> a/y -> a/z -> a/x (remove one of these depends_on entries)`}},
		{"override of unknown environment", badFile("  a:\n    components:\n      db: {kind: RDS, environments: {prd: {x: 1}}}\n"), []string{
			`deployer.yaml:8: services.a.components.db.environments.prd: unknown environment "prd" (did you mean "prod"?)`}},
		{"config not a mapping", badFile("  a:\n    components:\n      db: {kind: RDS, config: [1]}\n"), []string{
			`deployer.yaml:8: services.a.components.db.config: want a mapping of keys to values, found a list`}},
		{"bad durations", "backend:\n  lock_ttl: 1 hour\n  stale_after: -1m\n", []string{
			"deployer.yaml has 2 problems:",
			`  deployer.yaml:2: backend.lock_ttl: invalid duration "1 hour" (use a number with a unit, e.g. 30s, 5m, 1h)`,
			`  deployer.yaml:3: backend.stale_after: duration "-1m" must be positive (e.g. 30s, 5m, 1h)`}},
		{"heartbeat not shorter than ttl", "backend:\n  lock_ttl: 30s\n", []string{
			`deployer.yaml: backend.heartbeat_interval: 30s must be shorter than lock_ttl 30s (heartbeats extend the lease; use e.g. 30s with 1h)`}},
		{"stale before a heartbeat is due", "backend:\n  stale_after: 10s\n", []string{
			`deployer.yaml: backend.stale_after: 10s must be longer than heartbeat_interval 30s (a lock is STALE after missing heartbeats; use e.g. 4x the interval)`}},
		{"unknown lock scheme", "backend:\n  lock: etcd://host:2379\n", []string{
			`deployer.yaml:2: backend.lock: unknown lock backend scheme "etcd" (use file://DIR, dynamodb://TABLE?region=REGION, s3://BUCKET?region=REGION, redis://HOST:6379/0, postgres://USER@HOST/DB or none)`}},
		{"state on dynamodb", "backend:\n  state: dynamodb://t\n", []string{
			`deployer.yaml:2: backend.state: unknown state backend scheme "dynamodb" (use file://DIR, s3://BUCKET?region=REGION or postgres://USER@HOST/DB)`}},
		{"state none", "backend:\n  state: none\n", []string{
			`deployer.yaml:2: backend.state: the state backend cannot be "none": state must be stored somewhere (use file://DIR, s3://BUCKET?region=REGION or postgres://USER@HOST/DB)`}},
		{"path instead of URL", "backend:\n  state: .deployer\n", []string{
			`deployer.yaml:2: backend.state: ".deployer" is not a backend URL (write file://.deployer for a local directory, or use file://DIR, s3://BUCKET?region=REGION or postgres://USER@HOST/DB)`}},
		{"empty file URL", "backend:\n  lock: file://\n", []string{
			`deployer.yaml:2: backend.lock: "file://" names no directory (e.g. file://.deployer, relative to deployer.yaml)`}},
		{"several problems, ordered by line", "stack: s\nservics: {}\nbackend:\n  lok: x\n", []string{
			"deployer.yaml has 2 problems:",
			`  deployer.yaml:2: servics: unknown key (did you mean "services"?)`,
			`  deployer.yaml:4: backend.lok: unknown key (did you mean "lock"?)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "deployer.yaml", WithBackends(testBackends), WithKinds(testKinds))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			if diff := cmp.Diff(strings.Join(tc.want, "\n"), err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExamplesLoadAndResolve(t *testing.T) {
	for _, p := range []string{"../../examples/quickstart/deployer.yaml", "../../examples/user-platform/deployer.yaml"} {
		c, err := Load(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for env := range c.Environments {
			if _, err := c.Resolve(env); err != nil {
				t.Errorf("%s: resolve %s: %v", p, env, err)
			}
		}
	}
}

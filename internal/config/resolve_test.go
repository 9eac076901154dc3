package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"prod", "user-service", "a", "0", "db-2", strings.Repeat("a", 63)} {
		if err := ValidateName("service", ok); err != nil {
			t.Errorf("ValidateName(%q) = %v, want ok", ok, err)
		}
	}
	rule := "names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters"
	for _, bad := range []string{"../x", "a:b", "Prod", "a/b", "..", "-x", "a b", "a_b", strings.Repeat("a", 64)} {
		err := ValidateName("environment", bad)
		if err == nil || err.Error() != `environment "`+bad+`": `+rule {
			t.Errorf("ValidateName(%q) = %v", bad, err)
		}
	}
	if err := ValidateName("stack", ""); err == nil || err.Error() != "stack name is empty: "+rule {
		t.Errorf("ValidateName(\"\") = %v", err)
	}
}

func TestResolveMergesOverridesAndNormalizesDependencies(t *testing.T) {
	c, err := Parse([]byte(goodYAML), "deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Resolve("production")
	if err != nil {
		t.Fatal(err)
	}
	if r.Stack != "user-platform" || r.Env != "production" || r.EnvConfig["aws:region"] != "us-east-1" {
		t.Errorf("resolved %s/%s env config %v", r.Stack, r.Env, r.EnvConfig)
	}
	if diff := cmp.Diff([]string{"docs/site", "user-service/api", "user-service/database"}, r.Addresses()); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	api := r.Components["user-service/api"]
	if diff := cmp.Diff(map[string]any{"minReplicas": 5, "maxReplicas": 10}, api.Config["scaling"]); diff != "" {
		t.Errorf("production scaling (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user-service/database"}, api.DependsOn); diff != "" {
		t.Errorf("api depends_on (-want +got):\n%s", diff)
	}
	site := r.Components["docs/site"]
	if site.Kind != "Command" || site.Settings["command"]["create"] != "./render.sh" || len(site.Config) != 0 || site.Config == nil {
		t.Errorf("docs/site = %+v (settings %+v)", site, site.Settings)
	}
	st, _ := c.Resolve("staging")
	if got := st.Components["user-service/api"].Config["scaling"].(map[string]any)["minReplicas"]; got != 2 {
		t.Errorf("staging minReplicas = %v, want the base 2", got)
	}
	api.Config["image"].(map[string]any)["tag"] = "changed"
	if c.Services["user-service"].Components["api"].Config["image"].(map[string]any)["tag"] != "v1.2.3" {
		t.Errorf("Resolve shares config maps with the Config")
	}
}

func TestResolveUnknownEnvironment(t *testing.T) {
	c, err := Parse([]byte(goodYAML), "deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Resolve("prodution")
	want := `environment "prodution" is not in deployer.yaml (known: production, staging) (did you mean "production"?): pick one of those or add it under the environments key`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if _, err := c.Resolve("Prod"); err == nil || !strings.Contains(err.Error(), `environment "Prod": names are lower-case`) {
		t.Errorf("Resolve(Prod) = %v, want the name rule", err)
	}
	empty, _ := Parse([]byte("stack: s\n"), "deployer.yaml")
	if _, err := empty.Resolve("dev"); err == nil || !strings.Contains(err.Error(), "defines no environments") {
		t.Errorf("Resolve without environments = %v", err)
	}
}

func TestApplyEnv(t *testing.T) {
	env := map[string]string{
		"DEPLOYER_STACK":              "other",
		"DEPLOYER_BACKEND_STATE":      "s3://bucket",
		"DEPLOYER_BACKEND_LOCK":       "redis://localhost:6379/0",
		"DEPLOYER_LOCK_TTL":           "10m",
		"DEPLOYER_HEARTBEAT_INTERVAL": "5s",
		"DEPLOYER_STALE_AFTER":        "",
		"DEPLOYER_PARALLELISM":        "4",
	}
	c := Default()
	if c.Parallelism != DefaultParallelism {
		t.Errorf("default parallelism %d, want %d", c.Parallelism, DefaultParallelism)
	}
	if err := ApplyEnv(c, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	want := Backend{State: "s3://bucket", Lock: "redis://localhost:6379/0", LockTTL: 10 * time.Minute, HeartbeatInterval: 5 * time.Second, StaleAfter: 2 * time.Minute, MaxClockSkew: 30 * time.Second}
	if diff := cmp.Diff(want, c.Backend); diff != "" || c.Stack != "other" || c.Parallelism != 4 {
		t.Errorf("stack %q, parallelism %d, backend (-want +got):\n%s", c.Stack, c.Parallelism, diff)
	}
	if err := ApplyEnv(Default(), func(k string) string { return map[string]string{"DEPLOYER_PARALLELISM": "0"}[k] }); err == nil ||
		!strings.Contains(err.Error(), `DEPLOYER_PARALLELISM: want a positive whole number of components to apply at once (default 10), found "0"`) {
		t.Errorf("DEPLOYER_PARALLELISM=0: %v", err)
	}
	if c, err := Parse([]byte("stack: s\nparallelism: 3\n"), "deployer.yaml"); err != nil || c.Parallelism != 3 {
		t.Errorf("parallelism: 3 gives %v, %v", c, err)
	}
	if _, err := Parse([]byte("stack: s\nparallelism: many\n"), "deployer.yaml"); err == nil || !strings.Contains(err.Error(), "deployer.yaml:2: parallelism: want a positive whole number") {
		t.Errorf("parallelism: many gives %v", err)
	}

	bad := map[string]string{"DEPLOYER_LOCK_TTL": "forever", "DEPLOYER_BACKEND_LOCK": "zookeeper://x", "DEPLOYER_STACK": "My Stack"}
	err := ApplyEnv(Default(), func(k string) string { return bad[k] }, WithBackends(testBackends))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	wantMsg := `configuration has 3 problems:
  DEPLOYER_STACK: invalid stack name "My Stack": names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters
  DEPLOYER_BACKEND_LOCK: unknown lock backend scheme "zookeeper" (use file://DIR, dynamodb://TABLE?region=REGION, s3://BUCKET?region=REGION, redis://HOST:6379/0, postgres://USER@HOST/DB or none)
  DEPLOYER_LOCK_TTL: invalid duration "forever" (use a number with a unit, e.g. 30s, 5m, 1h)`
	if diff := cmp.Diff(wantMsg, err.Error()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}

	err = ApplyEnv(Default(), func(k string) string { return map[string]string{"DEPLOYER_HEARTBEAT_INTERVAL": "2h"}[k] })
	if err == nil || !strings.Contains(err.Error(), "backend.heartbeat_interval: 2h0m0s must be shorter than lock_ttl 1h0m0s") {
		t.Errorf("heartbeat 2h with ttl 1h: %v", err)
	}
}

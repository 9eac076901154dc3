package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolveReferences(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), []byte("CERT DATA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Config{Path: filepath.Join(dir, "deployer.yaml"), Dir: dir, Stack: "s",
		Environments: map[string]*Environment{"dev": {Config: map[string]any{"region": "${env:REGION}"}}},
		Services: map[string]*Service{"app": {Components: map[string]*Component{"db": {
			Kind: "Command",
			Config: map[string]any{
				"password": "${env:APP_PASSWORD}",
				"dsn":      "postgres://admin:${secret:env:APP_PASSWORD}@db",
				"cert":     "${file:cert.pem}",
				"nested":   map[string]any{"api": "${env:REGION}-x", "opaque": "kept"},
				"literal":  "${HOME} and ${other:thing} stay",
				"wrapped":  map[string]any{"secret": true, "value": "${env:REGION}"},
				"hosts":    []any{"k0", "k1"},
			},
			Secrets: []string{"nested.opaque", "absent.path", "hosts[1]", "hosts[9]", "password.deeper"},
		}}}},
	}
	res, err := c.Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"APP_PASSWORD": "hunter2", "REGION": "eu-west-1"}
	if err := ResolveReferences(c, res, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"password": "hunter2",
		"dsn":      map[string]any{"secret": true, "value": "postgres://admin:hunter2@db"},
		"cert":     "CERT DATA",
		"nested":   map[string]any{"api": "eu-west-1-x", "opaque": map[string]any{"secret": true, "value": "kept"}},
		"literal":  "${HOME} and ${other:thing} stay",
		"wrapped":  map[string]any{"secret": true, "value": "eu-west-1"},
		"hosts":    []any{"k0", map[string]any{"secret": true, "value": "k1"}},
	}
	if diff := cmp.Diff(want, res.Components["app/db"].Config); diff != "" {
		t.Errorf("resolved config (-want +got):\n%s", diff)
	}
	if res.EnvConfig["region"] != "eu-west-1" {
		t.Errorf("environment config: %v", res.EnvConfig)
	}
	// deployer.yaml itself is not changed: another environment resolves afresh.
	if c.Services["app"].Components["db"].Config["password"] != "${env:APP_PASSWORD}" {
		t.Errorf("the loaded config was changed")
	}
}

func TestResolveReferencesNamesTheYAMLPathOfEachMissingValue(t *testing.T) {
	c := &Config{Path: "/p/deployer.yaml", Dir: t.TempDir(), Stack: "s",
		Environments: map[string]*Environment{"dev": nil},
		Services: map[string]*Service{"app": {Components: map[string]*Component{"db": {
			Kind:   "Command",
			Config: map[string]any{"password": "${env:APP_PASSWORD}", "tls": map[string]any{"key": "${file:missing.pem}"}},
		}}}},
	}
	res, err := c.Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	err = ResolveReferences(c, res, func(string) string { return "" })
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) != 2 {
		t.Fatalf("want 2 problems, got %v", err)
	}
	if got := verr.Problems[0].String(); got != "deployer.yaml: services.app.components.db.config.password: ${env:APP_PASSWORD}: environment variable APP_PASSWORD is not set (export it before running deployer, e.g. from your CI's secrets)" {
		t.Errorf("problem 0: %s", got)
	}
	if got := verr.Problems[1].Path; got != "services.app.components.db.config.tls.key" {
		t.Errorf("problem 1 path: %s", got)
	}
}

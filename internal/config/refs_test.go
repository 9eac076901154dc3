package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/secrets/sensitive"

	"github.com/deployer-dev/deployer/internal/inputfile"
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
				"wrapped":  map[string]any{"secret": true, "value": "${env:ZONE}"},
				"hosts":    []any{"k0", "k1"},
			},
			Secrets: []string{"nested.opaque", "absent.path", "hosts[1]", "hosts[9]", "password.deeper"},
		}}}},
	}
	res, err := c.Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"APP_PASSWORD": "hunter2", "REGION": "eu-west-1", "ZONE": "zone-a"}
	if err := ResolveReferences(c, res, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"password": "hunter2",
		"dsn":      map[string]any{"secret": true, "value": "postgres://admin:hunter2@db"},
		"cert":     "CERT DATA",
		"nested":   map[string]any{"api": "eu-west-1-x", "opaque": map[string]any{"secret": true, "value": "kept"}},
		"literal":  "${HOME} and ${other:thing} stay",
		"wrapped":  map[string]any{"secret": true, "value": "zone-a"},
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

// A value read from a variable or a file named like a secret, or equal to
// a secret of the environment's config under another key, is a secret.
func TestResolveReferencesSecretBySourceAndByValue(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "server_key.pem"), []byte("KEY DATA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Config{Path: filepath.Join(dir, "deployer.yaml"), Dir: dir, Stack: "s",
		Environments: map[string]*Environment{"dev": {Config: map[string]any{"mirror": "same-as-pw", "short": "ab"}}},
		Services: map[string]*Service{"app": {Components: map[string]*Component{"db": {
			Kind: "Command",
			Config: map[string]any{
				"note":        "${env:PULUMI_ACCESS_TOKEN}",
				"arm":         "x-${env:ARM_CLIENT_SECRET}",
				"cert":        "${file:server_key.pem}",
				"region":      "${env:REGION}",
				"db_password": "same-as-pw",
				"pin":         map[string]any{"secret": true, "value": 4455},
				"alias":       []any{"same-as-pw", "other", 4455, "ab"},
				"enabled":     true,
			},
		}}}},
	}
	res, err := c.Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PULUMI_ACCESS_TOKEN": "pul-1", "ARM_CLIENT_SECRET": "arm-1", "REGION": "eu-west-1"}
	if err := ResolveReferences(c, res, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	secret := func(v any) any { return map[string]any{"secret": true, "value": v} }
	want := map[string]any{
		"note": secret("pul-1"), "arm": secret("x-arm-1"), "cert": secret("KEY DATA"), "region": "eu-west-1",
		"db_password": "same-as-pw", "pin": secret(4455),
		"alias":   []any{secret("same-as-pw"), "other", secret(4455), "ab"},
		"enabled": true,
	}
	if diff := cmp.Diff(want, res.Components["app/db"].Config); diff != "" {
		t.Errorf("resolved config (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"mirror": secret("same-as-pw"), "short": "ab"}, res.EnvConfig); diff != "" {
		t.Errorf("environment config (-want +got):\n%s", diff)
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

// ${file:} reads only regular files, each at most 1 MiB and all of them
// together at most 16 MiB: /dev/zero, /dev/stdin (a pipe) and a huge file
// are refused before they are read.
func TestFileReferencesAreBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, inputfile.MaxReferencedBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // never written: a read of it would hang
	pipe := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	for path, want := range map[string]string{
		"/dev/zero": "is a device", pipe: "named pipe", dir: "a directory", big: "over the limit of 1 MiB",
	} {
		c := &Config{Dir: dir, Path: filepath.Join(dir, "deployer.yaml")}
		res := &Resolved{Env: "dev", Components: map[string]*ResolvedComponent{"s/c": {Service: "s", Name: "c",
			Config: map[string]any{"cert": "${file:" + path + "}"}}}}
		err := ResolveReferences(c, res, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "services.s.components.c.config.cert") {
			t.Errorf("${file:%s}: %v, want an error containing %q", path, err, want)
		}
	}
	// 17 files of 1 MiB: the total is bounded too.
	cfg := map[string]any{}
	one := filepath.Join(dir, "one.pem")
	if err := os.WriteFile(one, make([]byte, inputfile.MaxReferencedBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 17 {
		cfg[fmt.Sprintf("k%02d", i)] = "${file:one.pem}"
	}
	c := &Config{Dir: dir, Path: filepath.Join(dir, "deployer.yaml")}
	res := &Resolved{Env: "dev", Components: map[string]*ResolvedComponent{"s/c": {Service: "s", Name: "c", Config: cfg}}}
	if err := ResolveReferences(c, res, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "all ${file:} references together may read 16 MiB") {
		t.Errorf("17 MiB of references: %v", err)
	}
}

// A CI secret read under a key that does not look secret is a secret all
// the same: sealed in state, (sensitive) in plans, whether it comes by
// ${env:} or inside a file ${file:} reads.
func TestCISecretsReadUnderAnyKeyAreSecret(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "environ"), []byte("X=1\x00AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Config{Path: filepath.Join(dir, "deployer.yaml"), Dir: dir, Stack: "s",
		Environments: map[string]*Environment{"dev": {}},
		Services: map[string]*Service{"app": {Components: map[string]*Component{"db": {
			Kind:   "Command",
			Config: map[string]any{"note": "${env:AWS_SECRET_ACCESS_KEY}", "dump": "${file:environ}", "gh": "${env:GITHUB_TOKEN}", "region": "${env:REGION}"},
		}}}},
	}
	res, err := c.Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", "GITHUB_TOKEN": "ghs_abc", "REGION": "eu-west-1"}
	if err := ResolveReferences(c, res, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	got := res.Components["app/db"].Config
	for _, k := range []string{"note", "dump", "gh"} {
		if !sensitive.IsSecretValue(got[k]) {
			t.Errorf("%s = %#v, want a secret value", k, got[k])
		}
	}
	if got["region"] != "eu-west-1" {
		t.Errorf("region = %#v, want the plain value", got["region"])
	}
}

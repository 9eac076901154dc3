//go:build unix

package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// keyVars are the variables of a state's secrets key; no child deployer
// starts may see them unless the user passes one explicitly.
var keyVars = []string{"DEPLOYER_SECRETS_PASSPHRASE=pp-deployer-1", "DEPLOYER_SECRETS_PASSPHRASE_FILE=/nonexistent/pp",
	"PULUMI_CONFIG_PASSPHRASE=pp-pulumi-2", "PULUMI_CONFIG_PASSPHRASE_FILE=/nonexistent/pulumi-pp"}

const envProbe = `env | grep -E '^(DEPLOYER_SECRETS_|PULUMI_CONFIG_PASSPHRASE)' | sed 's/=.*//' | sort | tr '\n' ' ' > %s; echo probe-ran >> %s`

func TestChildrenDoNotGetTheSecretsKey(t *testing.T) {
	down := newStatusServer(t)
	down.stop()
	p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      c:
        kind: Command
        command: {create: "cat >/dev/null; `+strings.ReplaceAll(envProbe, "%s", "component.env")+`", delete: "true"}
shared:
  db:
    stop: "`+strings.ReplaceAll(envProbe, "%s", "stop.env")+`"
    sharers:
      me: {status_url: "`+down.srv.URL+`"}
      other: {status_url: "`+down.srv.URL+`"}
`)
	p.env = append([]string{}, keyVars...)
	p.env = append(p.env, "DEPLOYER_SECRETS_PASSPHRASE_FILE=") // the file would be read
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.mustRun(0, "guard", "stop", "db", "--as", "me")
	p.mustRun(0, "lock", "exec", "--key", "k", "--", "sh", "-c", strings.ReplaceAll(envProbe, "%s", "exec.env"))
	for _, f := range []string{"component.env", "stop.env", "exec.env"} {
		got := string(p.read(f))
		if !strings.Contains(got, "probe-ran") || strings.Contains(got, "PASSPHRASE") {
			t.Errorf("%s: the child saw %q", f, got)
		}
	}
	// Passed explicitly, it arrives.
	p.mustRun(0, "lock", "exec", "--key", "k", "--", "env", "PULUMI_CONFIG_PASSPHRASE=pp-pulumi-2", "sh", "-c", strings.ReplaceAll(envProbe, "%s", "explicit.env"))
	if got := string(p.read("explicit.env")); !strings.Contains(got, "PULUMI_CONFIG_PASSPHRASE") {
		t.Errorf("an explicitly passed key should arrive: %q", got)
	}
}

// A status_url that answers 404 (mistyped), 401/403 (behind a login), 405
// (no HEAD) or a redirect is a misconfiguration: UNKNOWN, counted as UP,
// with a warning naming the URL and the code. The resource is not stopped.
func TestGuardMisconfiguredStatusURLNeverStops(t *testing.T) {
	for _, code := range []int{http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized, http.StatusForbidden,
		http.StatusFound, http.StatusTooManyRequests} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			mine, wrong := newStatusServer(t), newStatusServer(t)
			mine.stop()
			wrong.code.Store(int32(code))
			p := guardProject(t, "file", map[string]string{"a": mine.srv.URL, "b": wrong.srv.URL + "/quik"})
			r := p.mustRun(2, "guard", "stop", "db", "--as", "a", "--detailed-exitcode")
			if !strings.Contains(r.stdout, "skipped_shared_active") || len(p.lines("stops.log")) != 0 {
				t.Fatalf("HTTP %d stopped the resource:\n%s", code, r)
			}
			if want := "b answered HTTP " + strconv.Itoa(code); !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, wrong.srv.URL+"/quik") {
				t.Errorf("the warning should name the code and URL:\n%s", r)
			}
		})
	}
}

// childEnv is deployer's environment in the tests of what children get:
// key material and CI tokens no child may see, and variables a component or
// Pulumi provider needs (cloud credentials, the user's own).
var childEnv = []string{"DEPLOYER_SECRETS_PASSPHRASE=pp-deployer-1", "DEPLOYER_SECRETS_NEW_PASSPHRASE=pp-new-3",
	"GITHUB_TOKEN=ghs_e2eToken", "GH_TOKEN=gho_e2eToken", "ACTIONS_RUNTIME_TOKEN=rt-e2e", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=idt-e2e",
	"AWS_SECRET_ACCESS_KEY=aws-e2e-secret", "E2E_PLAIN=plain"}

// withheld are the names no child gets; passed are the names Command
// components and Pulumi get.
var (
	withheld = []string{"DEPLOYER_SECRETS_PASSPHRASE", "DEPLOYER_SECRETS_NEW_PASSPHRASE", "GITHUB_TOKEN", "GH_TOKEN",
		"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}
	passed = []string{"AWS_SECRET_ACCESS_KEY", "E2E_PLAIN", "PATH", "HOME"}
)

// namesProbe writes the names of the child's environment variables to FILE.
const namesProbe = `env | sed 's/=.*//' | sort > FILE`

// checkNames fails unless the names in data hold every name of want and
// none of deny.
func checkNames(t *testing.T, child, data string, want, deny []string) {
	t.Helper()
	names := map[string]bool{}
	for _, n := range strings.Fields(data) {
		names[n] = true
	}
	for _, n := range want {
		if !names[n] {
			t.Errorf("%s should get %s; it got %v", child, n, strings.Fields(data))
		}
	}
	for _, n := range deny {
		if names[n] {
			t.Errorf("%s got %s", child, n)
		}
	}
}

// Command components, lock exec commands and git start without deployer's
// key material and the CI's tokens (docs/secrets.md#what-children-get); git
// gets only what git needs; a component still gets cloud credentials and
// the user's variables.
func TestChildrenStartFromTheEnvironmentRule(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      c:
        kind: Command
        command: {create: "cat >/dev/null; `+strings.ReplaceAll(namesProbe, "FILE", "component.env")+`", delete: "true"}
`)
	gitDir := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeGit := "#!/bin/sh\nenv | sed 's/=.*//' | sort > " + filepath.Join(p.dir, "git.env") + "\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(gitDir, "git"), []byte(fakeGit), 0o755); err != nil {
		t.Fatal(err)
	}
	p.env = append(append([]string{}, childEnv...), "PATH="+gitDir+":"+os.Getenv("PATH"), "GITHUB_SHA=", "GITHUB_REF_NAME=", "CI=")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.mustRun(0, "lock", "exec", "--key", "k", "--", "sh", "-c", strings.ReplaceAll(namesProbe, "FILE", "exec.env"))
	checkNames(t, "a Command component", string(p.read("component.env")), passed, withheld)
	checkNames(t, "a lock exec command", string(p.read("exec.env")), passed, withheld)
	checkNames(t, "git", string(p.read("git.env")), []string{"PATH", "HOME"},
		append([]string{"AWS_SECRET_ACCESS_KEY", "E2E_PLAIN"}, withheld...))
}

// The Pulumi CLI and its plugins (a provider process, as
// command:local:Command's would be) get what Pulumi needs, the passphrase
// of Pulumi's own secrets and cloud credentials, and neither deployer's key
// material nor the CI's tokens.
func TestRealPulumiPluginsDoNotGetDeployersKey(t *testing.T) {
	pp := newPulumiProject(t)
	p := pp.stack("envprobe", `stack: envprobe
backend: {state: file://../.deployer, lock: file://../.deployer}
environments: {dev: {}}
services:
  app:
    components:
      name:
        kind: PulumiResource
        config: {type: "deployertest:index:RandomName", properties: {length: 1}}
`)
	probe := filepath.Join(t.TempDir(), "provider.env")
	p.env = append(append([]string{}, childEnv...), "DEPLOYERTEST_ENVFILE="+probe)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	data, err := os.ReadFile(probe)
	if err != nil {
		t.Fatalf("the provider did not start: %v", err)
	}
	checkNames(t, "the Pulumi provider", string(data), append([]string{"PULUMI_CONFIG_PASSPHRASE"}, passed...), withheld)
}

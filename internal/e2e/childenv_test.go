//go:build unix

package e2e

import (
	"net/http"
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

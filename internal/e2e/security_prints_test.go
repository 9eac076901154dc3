//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileYAML: a component whose output and failure carry a workflow
// command, terminal escapes and an OSC title sequence.
const hostileYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
outputs:
  url: ${app/web.url}
services:
  app:
    components:
      web:
        kind: Command
        config: {v: 1}
        command: {create: "sh web.sh", update: "sh web.sh", delete: "true"}
`

const hostileWeb = `cat > /dev/null
if [ -n "${FAIL:-}" ]; then printf 'bad\n::warning::pwned-by-error\033]0;t\007\n##[stop-commands]tok\n' >&2; exit 3; fi
printf '{"url":"https://x\\n::warning::pwned-by-output\\u001b[2J"}' > "$DEPLOYER_OUTPUTS"
`

// Stored and foreign data is printed through the sanitiser: history,
// state show, state list, output, lock exec --skip-if-locked's holder and
// show of a tampered saved plan print no control character and no
// workflow command, their --json forms and output --raw under GitHub
// Actions no workflow command; state mv refuses a name config would
// refuse.
func TestStoredDataIsPrintedSanitised(t *testing.T) {
	p := newProject(t, hostileYAML)
	p.write("web.sh", hostileWeb)
	hostileUser := "mallory\n::warning::pwned-by-user\x1b[2J"
	p.env = []string{"USER=" + hostileUser}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.env = append(p.env, "FAIL=1")
	p.write("deployer.yaml", strings.Replace(hostileYAML, "v: 1", "v: 2", 1))
	p.mustRun(1, "deploy", "-e", "dev", "--yes")
	p.env = []string{"USER=" + hostileUser, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=", "GITHUB_OUTPUT="}
	for _, args := range [][]string{{"history", "-e", "dev"}, {"state", "show", "-e", "dev"}, {"state", "list", "-e", "dev"},
		{"output", "-e", "dev"}, {"output", "--raw", "url", "-e", "dev"}, {"state", "show", "-e", "dev", "--json"}, {"history", "-e", "dev", "--json"}} {
		r := p.mustRun(0, args...)
		// --json keeps its escapes, --raw out of a terminal its bytes (docs/decisions.md).
		joined := strings.Join(args, " ")
		checkRunner(t, joined, r.stdout+r.stderr, !strings.Contains(joined, "json") && !strings.Contains(joined, "raw"))
	}

	r := p.mustRun(2, "state", "mv", "-e", "dev", "app/web", "app/x\n::warning::pwned-by-mv")
	if !strings.Contains(r.stderr, "lower-case letters, digits and '-'") {
		t.Errorf("state mv should refuse the name as config does:\n%s", r)
	}
	checkRunner(t, "state mv", r.stdout+r.stderr, true)

	now := time.Now().Unix()
	rec, _ := json.Marshal(map[string]any{"lockKey": "custom:nightly", "lockId": "id\n::warning::pwned-by-id", "lockedBy": hostileUser,
		"lockedAt": now, "expiresAt": now + 3600, "lastHeartbeat": now, "fence": 1,
		"metadata": map[string]any{"hostname": "h\r\x1b]0;pwned\x07", "pid": 1, "operation": "exec"}})
	p.write(".deployer/locks/custom%3Anightly.json", string(rec))
	r = p.mustRun(0, "lock", "exec", "--key", "nightly", "--skip-if-locked", "--", "true")
	checkRunner(t, "lock exec --skip-if-locked", r.stdout+r.stderr, true)

	p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode", "--out", "saved.plan")
	data := string(p.read("saved.plan"))
	data = strings.ReplaceAll(data, `"web"`, `"web\n::warning::pwned-by-plan\u001b]0;t\u0007 ##[stop-commands]x"`)
	data = strings.ReplaceAll(data, `"qs"`, `"qs\n::warning::pwned-by-stack"`)
	p.write("tampered.plan", data)
	r = p.run("show", "tampered.plan")
	checkRunner(t, "show of a tampered plan", r.stdout+r.stderr, true)
	r = p.run("show", "tampered.plan", "--json")
	checkRunner(t, "show --json of a tampered plan", r.stdout+r.stderr, false)
	if _, err := os.Stat(filepath.Join(p.dir, "PWNED")); err == nil {
		t.Error("a command ran")
	}
}

// checkRunner fails when out holds a line the runner reads as a workflow
// command deployer did not write (runnerCommands), or (when controls is
// set) a control character.
func checkRunner(t *testing.T, where, out string, controls bool) {
	t.Helper()
	if planted := runnerCommands(out); len(planted) > 0 {
		t.Errorf("%s: the runner would read workflow commands from data: %q\n%s", where, planted, out)
	}
	if controls {
		checkPrinted(t, where, out)
	}
}

// The generated passphrase of an errored state is never printed, on any
// CI (Jenkins sets JENKINS_URL, Azure Pipelines TF_BUILD, neither sets CI)
// nor on a terminal: it goes to a 0600 file beside the errored state,
// which the error names (docs/decisions.md).
func TestErroredStateKeyIsNeverPrinted(t *testing.T) {
	for name, env := range map[string][]string{"jenkins": {"JENKINS_URL=http://jenkins.example/", "BUILD_URL=x"},
		"azure-pipelines": {"TF_BUILD=True"}, "no CI": nil} {
		t.Run(name, func(t *testing.T) {
			p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      api:
        kind: Command
        command: {create: 'cat >/dev/null; k=ak-01234; echo "{\"api_key\": \"${k}56789abcdef\"}" > $DEPLOYER_OUTPUTS', delete: "true"}
`)
			p.env = append([]string{"DEPLOYER_SECRETS_PASSPHRASE=", "PULUMI_CONFIG_PASSPHRASE=", "CI="}, env...)
			r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
			keyFile := filepath.Join(p.dir, "deployer-errored-qs-dev.passphrase")
			fi, err := os.Lstat(keyFile)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("key file: %v %v, want a file of mode 600\n%s", fi, err, r)
			}
			key := strings.TrimSpace(string(p.read("deployer-errored-qs-dev.passphrase")))
			if len(key) < 20 || strings.Contains(r.stdout+r.stderr, key) || !strings.Contains(r.stderr, "deployer-errored-qs-dev.passphrase") {
				t.Errorf("the error should name the key file and not show the key %q:\n%s", key, r)
			}
		})
	}
}

// A passphrase given where a name is expected is masked in the error that
// quotes the argument.
func TestPassphraseGivenAsAnArgumentIsMasked(t *testing.T) {
	p := newProject(t, hostileYAML)
	const pass = "Correct Horse 99"
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=" + pass, "PULUMI_CONFIG_PASSPHRASE=", "CI="}
	for _, args := range [][]string{{"plan", "-e", pass}, {"state", "mv", "-e", "dev", "app/web", "app/" + pass}, {"output", "-e", pass}} {
		r := p.run(args...)
		if r.code == 0 || strings.Contains(r.stdout+r.stderr, pass) || !strings.Contains(r.stderr, "***") {
			t.Errorf("deployer %s should fail with the passphrase masked:\n%s", strings.Join(args[:len(args)-1], " "), strings.ReplaceAll(r.String(), pass, "<PASSPHRASE>"))
		}
	}
}

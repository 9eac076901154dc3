//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pushYAML: api's update changes state.json behind deployer's back when
// the file tamper exists, so that deploy's state write loses its
// compare-and-swap and goes to the errored file.
const pushYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      api:
        kind: Command
        config: {v: VERSION}
        command:
          create: "cat >/dev/null"
          update: 'cat >/dev/null; if [ -f tamper ]; then echo " " >> .deployer/stacks/qs/dev/state.json; fi'
          delete: "true"
`

// An errored state written from serial 1, pushed after a deploy reached
// serial 2, is refused: it would drop the component created at serial 2.
// --force writes it, with a history record and an audit event.
func TestStatePushRefusesAFileNotWrittenFromTheStoredSerial(t *testing.T) {
	p := newProject(t, strings.Replace(pushYAML, "VERSION", "1", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("tamper", "")
	p.write("deployer.yaml", strings.Replace(pushYAML, "VERSION", "2", 1))
	r := p.mustRun(4, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "deployer-errored-qs-dev.json") {
		t.Fatalf("want an errored state:\n%s", r)
	}
	os.Remove(filepath.Join(p.dir, "tamper"))
	// Kept aside: an errored state left in place refuses the next deploy.
	if err := os.Rename(filepath.Join(p.dir, "deployer-errored-qs-dev.json"), filepath.Join(p.dir, "old-errored.json")); err != nil {
		t.Fatal(err)
	}
	p.write("deployer.yaml", strings.Replace(pushYAML, "VERSION", "2", 1)+`      web:
        kind: Command
        command: {create: "cat >/dev/null", delete: "true"}
`)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	audit := filepath.Join(p.dir, "audit.log")

	r = p.mustRun(4, "state", "push", "old-errored.json", "-e", "dev", "--yes", "--audit-log", audit)
	for _, want := range []string{"serial 2, so it was written from serial 1, but the stored state is at serial 2", "--force"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("state push of an old errored file should say %q:\n%s", want, r)
		}
	}
	st := readState(t, p)
	if st.Serial != 2 || st.Resources["s/web"] == nil {
		t.Fatalf("the refused push changed the state: serial %d, resources %v", st.Serial, st.Resources)
	}

	p.mustRun(0, "state", "push", "old-errored.json", "-e", "dev", "--yes", "--force", "--audit-log", audit)
	st = readState(t, p)
	if st.Serial != 3 {
		t.Errorf("the forced push should write serial 3, got %d", st.Serial)
	}
	last := st.History[0] // newest first
	if last.Type != "state-push-forced" || last.Serial != 3 {
		t.Errorf("the forced push should be recorded in the history: %+v", last)
	}
	var forced map[string]any
	for _, ev := range auditEvents(t, audit) {
		if ev["event"] == "state.push_forced" {
			forced = ev
		}
	}
	if forced == nil || forced["file_serial"] != float64(2) || forced["stored_serial"] != float64(2) {
		t.Errorf("the forced push should be audited with the serials it overrode: %v", forced)
	}
}

type pushedState struct {
	Serial    int64                      `json:"serial"`
	Resources map[string]json.RawMessage `json:"resources"`
	History   []struct {
		Type   string `json:"type"`
		Serial int64  `json:"serial"`
	} `json:"deployment_history"`
}

func readState(t *testing.T, p *project) pushedState {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, ".deployer", "stacks", "qs", "dev", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st pushedState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// typedSecretYAML: db has a numeric secret by key name, a numeric secret
// written {secret: true, value: N} and a boolean secret; it generates a
// numeric password output. app prints all of them and fails.
const typedSecretYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      db:
        kind: Command
        config:
          db_password: 87654321
          pin: {secret: true, value: 4455667788}
          tls_secret: true
          name: db-name-str
        command:
          create: sh db.sh
          delete: "true"
      app:
        kind: Command
        depends_on: [db]
        config: {api_token: twin-secret-value}
        command:
          create: sh app.sh
          delete: "true"
`

// The generated values are computed, so no file of the project holds them.
const typedDBScript = `cat >/dev/null
echo "db pw $DEPLOYER_CONFIG_DB_PASSWORD pin $DEPLOYER_CONFIG_PIN"
printf '{"password": %s, "same": "twin-secret-%s"}' "$((98765432100 + 1))" "value" > "$DEPLOYER_OUTPUTS"
`

const typedAppScript = `cat >/dev/null
echo "app pw $DEPLOYER_DEP_S_DB_PASSWORD cfg $DEPLOYER_CONFIG_API_TOKEN" >&2
exit 1
`

var typedSecrets = []string{"87654321", "4455667788", "98765432101", "twin-secret-value"}

// Numeric secrets, in config and in generated outputs, are masked in
// streamed output, annotations and the job summary, announced with
// ::add-mask::, and sealed in state and history (also in the deployment
// record's error); a boolean secret is sealed.
func TestNumericAndBooleanSecretsAreMaskedAndSealed(t *testing.T) {
	p := newProject(t, typedSecretYAML)
	p.write("db.sh", typedDBScript)
	p.write("app.sh", typedAppScript)
	summary := filepath.Join(t.TempDir(), "summary.md")
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=typed-pass", "PULUMI_CONFIG_PASSPHRASE=",
		"GITHUB_ACTIONS=true", "GITHUB_RUN_ID=42", "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT="}
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	for _, v := range typedSecrets {
		if !strings.Contains(r.stderr, "::add-mask::"+v+"\n") {
			t.Errorf("%s should be announced with ::add-mask::\n%s", v, r)
		}
		for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
			if strings.Contains(line, v) && !strings.HasPrefix(line, "::add-mask::") {
				t.Errorf("%s is printed: %q", v, line)
			}
		}
		grepTree(t, filepath.Join(p.dir, ".deployer"), v)
		grepTree(t, summary, v)
	}
	data := string(p.read(".deployer/stacks/qs/dev/state.json"))
	var st struct {
		Resources map[string]struct {
			DesiredConfig map[string]any `json:"desired_config"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(data), &st); err != nil {
		t.Fatal(err)
	}
	if v := st.Resources["s/db"].DesiredConfig["tls_secret"]; !isEnvelope(v) {
		t.Errorf("the boolean secret should be sealed in state, got %v", v)
	}
}

// Equal secrets in two places have unrelated ciphertexts; an unchanged
// secret keeps its ciphertext from one write to the next.
func TestEqualSecretsHaveUnrelatedCiphertexts(t *testing.T) {
	p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      a:
        kind: Command
        config: {password: same-secret-value, other_password: same-secret-value}
        command: {create: "cat >/dev/null", update: "cat >/dev/null", delete: "true"}
      b:
        kind: Command
        config: {password: same-secret-value, n: "VERSION"}
        command: {create: "cat >/dev/null", update: "cat >/dev/null", delete: "true"}
`)
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=pass-phrase", "PULUMI_CONFIG_PASSPHRASE="}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	cts := func() []string {
		var out []string
		for _, m := range strings.Split(string(p.read(".deployer/stacks/qs/dev/state.json")), `"ciphertext": "`)[1:] {
			out = append(out, m[:strings.IndexByte(m, '"')])
		}
		return out
	}
	first := cts()
	seen := map[string]bool{}
	for _, c := range first {
		if seen[c] {
			t.Errorf("two secrets share the ciphertext %s", c)
		}
		seen[c] = true
	}
	if len(first) != 3 {
		t.Fatalf("want 3 sealed values, got %v", first)
	}
	p.write("deployer.yaml", strings.Replace(string(p.read("deployer.yaml")), "VERSION", "2", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	for _, c := range cts() {
		if !seen[c] {
			t.Errorf("an unchanged secret got a new ciphertext %s (had %v)", c, first)
		}
	}
}

func isEnvelope(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["deployer:secret"] == "v1"
}

// lock exec records its command line as the program and a digest of its
// arguments, NAME=value ones included: in the lock record, state locks
// --json and the audit log.
func TestLockExecRecordsNoSecretArgument(t *testing.T) {
	p := newProject(t, "stack: qs\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\n")
	audit := filepath.Join(p.dir, "audit.log")
	r := p.mustRun(0, "lock", "exec", "--key", "k", "--audit-log", audit, "--",
		"env", "PULUMI_CONFIG_PASSPHRASE=pass-in-argv-123", "sh", "-c", "cat .deployer/locks/* 2>/dev/null; "+bin+" state locks --json")
	if strings.Contains(r.stdout+r.stderr, "pass-in-argv-123") {
		t.Errorf("the passphrase is shown:\n%s", r)
	}
	if !strings.Contains(r.stdout, `"command": "env [4 args, sha256:`) {
		t.Errorf("state locks should show the program and a digest of its arguments:\n%s", r)
	}
	grepTree(t, p.dir, "pass-in-argv-123")
}

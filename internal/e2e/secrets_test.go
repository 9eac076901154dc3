//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretYAML is a quickstart variant whose component takes its password
// from the environment, echoes it on stdout and stderr, and builds an
// output that embeds it. update fails when FAIL is set; when TAMPER is set
// it changes state.json behind deployer's back, so the state write loses
// its compare-and-swap and the new state goes to the errored file.
const secretYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  app:
    components:
      db:
        kind: Command
        config:
          user: admin
          password: ${env:APP_PASSWORD}
        command:
          create: sh db.sh
          update: sh db.sh
          delete: "true"
      web:
        kind: Command
        depends_on: [db]
        config: {port: 8080}
        command: {create: "cat > /dev/null", update: "cat > /dev/null", delete: "true"}
`

const secretScript = `set -eu
cat > /dev/null
echo "connecting as admin with $DEPLOYER_CONFIG_PASSWORD"
echo "stderr also says $DEPLOYER_CONFIG_PASSWORD" >&2
echo "passphrase in my environment: ${DEPLOYER_SECRETS_PASSPHRASE:-none}"
if [ -n "${TAMPER:-}" ]; then echo " " >> .deployer/stacks/qs/dev/state.json; fi
if [ -n "${FAIL:-}" ]; then echo "failing with $DEPLOYER_CONFIG_PASSWORD" >&2; exit 3; fi
printf '{"url":"postgres://admin:%s@db","db_password":"%s","host":"db"}' "$DEPLOYER_CONFIG_PASSWORD" "$DEPLOYER_CONFIG_PASSWORD" > "$DEPLOYER_OUTPUTS"
`

const (
	appPassword = "hunter2-Quickstart-9f3"
	passphrase  = "correct horse battery staple"
)

// grepTree fails the test when any file under dir (or the file) holds s.
func grepTree(t *testing.T, path, s string) {
	t.Helper()
	_ = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), s) {
			t.Errorf("%s holds the secret value:\n%s", p, data)
		}
		return nil
	})
}

func TestSecretsAreNeverStoredOrPrinted(t *testing.T) {
	p := newProject(t, secretYAML)
	p.write("db.sh", secretScript)
	p.env = []string{"APP_PASSWORD=" + appPassword, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}
	audit := filepath.Join(p.dir, "audit.log")
	var outputs []result
	run := func(code int, args ...string) result {
		t.Helper()
		r := p.mustRun(code, append(args, "--audit-log", audit)...)
		outputs = append(outputs, r)
		return r
	}

	run(2, "plan", "-e", "dev", "--detailed-exitcode")
	run(0, "plan", "-e", "dev", "--json")
	r := run(0, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "connecting as admin with ***") || !strings.Contains(r.stderr, "stderr also says ***") {
		t.Errorf("streamed component output should show *** for the password:\n%s", r)
	}
	if !strings.Contains(r.stderr, "passphrase in my environment: none") {
		t.Errorf("components should not inherit DEPLOYER_SECRETS_PASSPHRASE:\n%s", r)
	}

	// Same value: no change. A new value: one update of a (sensitive) field.
	run(0, "plan", "-e", "dev", "--detailed-exitcode")
	p.env[0] = "APP_PASSWORD=" + appPassword + "-v2"
	r = run(2, "plan", "-e", "dev", "--detailed-exitcode", "--json")
	var pl struct {
		Summary struct{ Update int } `json:"summary"`
		Steps   []struct {
			Action string `json:"action"`
			Diffs  []struct {
				Path      string `json:"path"`
				Sensitive bool   `json:"sensitive"`
				New       any    `json:"new"`
			} `json:"diffs"`
		} `json:"steps"`
	}
	err := json.Unmarshal([]byte(r.stdout), &pl)
	var updates []int
	for i, st := range pl.Steps {
		if st.Action == "update" {
			updates = append(updates, i)
		}
	}
	if err != nil || pl.Summary.Update != 1 || len(updates) != 1 || len(pl.Steps[updates[0]].Diffs) != 1 ||
		!pl.Steps[updates[0]].Diffs[0].Sensitive || pl.Steps[updates[0]].Diffs[0].New != "(sensitive)" {
		t.Fatalf("a new password should be one update of a (sensitive) field: %v\n%s", err, r)
	}
	r = run(2, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "password: (sensitive) -> (sensitive)") {
		t.Errorf("human plan should show the password as (sensitive):\n%s", r)
	}

	// A failed deploy records the failure; its error names no secret.
	p.env = append(p.env, "FAIL=1")
	run(1, "deploy", "-e", "dev", "--yes")
	p.env = p.env[:len(p.env)-1]
	// A deploy whose state write fails keeps the new state in the errored file.
	p.env = append(p.env, "TAMPER=1")
	r = run(4, "deploy", "-e", "dev", "--yes")
	p.env = p.env[:len(p.env)-1]
	errored := filepath.Join(p.dir, "deployer-errored-qs-dev.json")
	if _, err := os.Stat(errored); err != nil {
		t.Fatalf("a failed state write should leave %s: %v\n%s", errored, err, r)
	}
	if fi, _ := os.Stat(errored); fi.Mode().Perm() != 0o600 {
		t.Errorf("errored file mode %o, want 600", fi.Mode().Perm())
	}
	// Put the state back the way deployer wrote it and restore serial 1.
	st := p.read(".deployer/stacks/qs/dev/state.json")
	p.write(".deployer/stacks/qs/dev/state.json", strings.TrimSuffix(string(st), " \n"))
	if err := os.Chmod(filepath.Join(p.dir, ".deployer/stacks/qs/dev/state.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The errored state pushes as it is (sealed), and opens with the passphrase.
	run(0, "state", "push", "deployer-errored-qs-dev.json", "-e", "dev", "--yes")
	run(0, "plan", "-e", "dev")
	run(0, "restore", "-e", "dev", "--serial", "1", "--yes")
	run(0, "state", "show", "-e", "dev")
	r = run(0, "state", "show", "-e", "dev", "--json")
	if strings.Contains(r.stdout, "ciphertext") || !strings.Contains(r.stdout, `"password": "(sensitive)"`) {
		t.Errorf("state show --json should show secrets as (sensitive):\n%s", r)
	}
	run(0, "state", "show", "-e", "dev", "--serial", "2", "--json")
	run(0, "history", "-e", "dev")
	run(0, "history", "-e", "dev", "--json")
	run(0, "state", "locks")

	for _, v := range []string{appPassword, appPassword + "-v2"} {
		grepTree(t, filepath.Join(p.dir, ".deployer"), v)
		grepTree(t, errored, v)
		grepTree(t, audit, v)
		for _, o := range outputs {
			if strings.Contains(o.stdout, v) || strings.Contains(o.stderr, v) {
				t.Errorf("command output holds the secret value:\n%s", o)
			}
		}
	}

	// The state and its directory are private to the user.
	for path, want := range map[string]os.FileMode{".deployer/stacks/qs/dev/state.json": 0o600, ".deployer/stacks/qs/dev": 0o700,
		".deployer/stacks/qs/dev/history": 0o700} {
		fi, err := os.Stat(filepath.Join(p.dir, path))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %o", path, fi.Mode().Perm(), err, want)
		}
	}

	// --show-secrets needs --yes without a terminal, prints the value and
	// is audited.
	p.mustRun(2, "state", "show", "-e", "dev", "--show-secrets", "--json")
	r = p.mustRun(0, "state", "show", "-e", "dev", "--show-secrets", "--yes", "--json", "--audit-log", audit)
	if !strings.Contains(r.stdout, appPassword) {
		t.Errorf("state show --show-secrets should print the password:\n%s", r)
	}
	if a := string(p.read("audit.log")); !strings.Contains(a, "state.secrets_shown") || strings.Contains(a, appPassword) {
		t.Errorf("the audit log should record the reveal, without the value:\n%s", a)
	}
}

func TestSecretsWrongPassphraseOrMissingVariableStopBeforeTheLock(t *testing.T) {
	p := newProject(t, secretYAML)
	p.write("db.sh", secretScript)
	p.env = []string{"APP_PASSWORD=" + appPassword, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	audit := filepath.Join(p.dir, "audit.log")

	p.env[1] = "DEPLOYER_SECRETS_PASSPHRASE=wrong"
	for _, args := range [][]string{{"deploy", "-e", "dev", "--yes"}, {"plan", "-e", "dev"}, {"destroy", "-e", "dev", "--yes"}} {
		r := p.mustRun(1, append(args, "--audit-log", audit)...)
		if !strings.Contains(r.stderr, "secrets provider passphrase") || !strings.Contains(r.stderr, "DEPLOYER_SECRETS_PASSPHRASE") {
			t.Errorf("%v: the error should name the provider and the variable:\n%s", args, r)
		}
	}
	p.env[1] = "DEPLOYER_SECRETS_PASSPHRASE="
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes", "--audit-log", audit)
	if !strings.Contains(r.stderr, "DEPLOYER_SECRETS_PASSPHRASE is not set") {
		t.Errorf("a missing passphrase should say which variable to set:\n%s", r)
	}
	p.env = []string{"APP_PASSWORD=", "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}
	r = p.mustRun(1, "deploy", "-e", "dev", "--yes", "--audit-log", audit)
	if !strings.Contains(r.stderr, "deployer.yaml: services.app.components.db.config.password: ${env:APP_PASSWORD}: environment variable APP_PASSWORD is not set") {
		t.Errorf("a missing variable should name the YAML path:\n%s", r)
	}
	if data, _ := os.ReadFile(audit); strings.Contains(string(data), "lock.acquired") {
		t.Errorf("no lock should have been taken:\n%s", data)
	}
}

func TestSecretsRotateReencryptsAsANewSerialUnderTheLock(t *testing.T) {
	p := newProject(t, secretYAML)
	p.write("db.sh", secretScript)
	p.env = []string{"APP_PASSWORD=" + appPassword, "DEPLOYER_SECRETS_PASSPHRASE=old-pass-1x", "PULUMI_CONFIG_PASSPHRASE="}
	audit := filepath.Join(p.dir, "audit.log")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	before := p.state("qs", "dev")

	r := p.mustRun(2, "secrets", "rotate", "-e", "dev")
	if !strings.Contains(r.stderr, "DEPLOYER_SECRETS_NEW_PASSPHRASE") {
		t.Errorf("rotate without a new passphrase should name the variable:\n%s", r)
	}
	p.env = append(p.env, "DEPLOYER_SECRETS_NEW_PASSPHRASE=new-pass-2y")
	r = p.mustRun(0, "secrets", "rotate", "-e", "dev", "--json", "--audit-log", audit)
	var out struct {
		Serial   int64  `json:"serial"`
		Provider string `json:"provider"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Serial != 2 || out.Provider != "passphrase" {
		t.Fatalf("rotate --json: %v\n%s", err, r)
	}
	after := p.state("qs", "dev")
	if after.Lineage != before.Lineage || after.Serial != 2 || after.DeploymentHistory[0].Type != "rotate-secrets" {
		t.Errorf("rotate should write serial 2 of the same lineage with a rotate-secrets entry: %+v", after.DeploymentHistory)
	}
	if a := string(p.read("audit.log")); !strings.Contains(a, `"lock.acquired"`) || !strings.Contains(a, `"secrets.rotated"`) {
		t.Errorf("rotate should take the stack lock and be audited:\n%s", a)
	}
	p.env = p.env[:len(p.env)-1]
	r = p.mustRun(1, "plan", "-e", "dev")
	if !strings.Contains(r.stderr, "the passphrase does not open") {
		t.Errorf("the old passphrase should no longer open the state:\n%s", r)
	}
	p.env[1] = "DEPLOYER_SECRETS_PASSPHRASE=new-pass-2y"
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	grepTree(t, filepath.Join(p.dir, ".deployer"), appPassword)
}

func TestSecretsAreAnnouncedOnceToGitHubActions(t *testing.T) {
	p := newProject(t, secretYAML)
	p.write("db.sh", secretScript)
	p.env = []string{"APP_PASSWORD=" + appPassword, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE=",
		"GITHUB_ACTIONS=true", "GITHUB_RUN_ID=42", "GITHUB_STEP_SUMMARY=", "GITHUB_OUTPUT="}
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if n := strings.Count(r.stderr, "::add-mask::"+appPassword+"\n"); n != 1 {
		t.Errorf("the password should be announced once with ::add-mask::, got %d:\n%s", n, r)
	}
	shown := 0
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, appPassword) && !strings.HasPrefix(line, "::add-mask::") {
			shown++
		}
	}
	if shown != 0 || strings.Contains(r.stdout, appPassword) {
		t.Errorf("besides ::add-mask::, the password should be masked:\n%s", r)
	}
}

//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Under CI, the generated passphrase of an errored state is never printed
// (the log and the ::error annotation are read by everyone who can read the
// run): it is written to a 0600 file next to the errored state, which the
// message names; the job summary says the state was not saved; state push
// with the file writes the state.
func TestSecurityErroredStateKeyUnderCIGoesToAFile(t *testing.T) {
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
	summary := filepath.Join(t.TempDir(), "summary.md")
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=", "PULUMI_CONFIG_PASSPHRASE=", "CI=true", "GITHUB_ACTIONS=true",
		"GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT=", "GITHUB_RUN_ID=42"}
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	keyFile := filepath.Join(p.dir, "deployer-errored-qs-dev.passphrase")
	fi, err := os.Lstat(keyFile)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want a regular file of mode 600\n%s", fi, err, r)
	}
	key := strings.TrimSpace(string(p.read("deployer-errored-qs-dev.passphrase")))
	if len(key) < 20 {
		t.Fatalf("the key file holds %q, want the generated passphrase", key)
	}
	sum, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"output": r.stdout + r.stderr, "job summary": string(sum)} {
		if strings.Contains(text, key) {
			t.Errorf("the %s shows the generated passphrase:\n%s", what, text)
		}
	}
	if !strings.Contains(r.stderr, "deployer-errored-qs-dev.passphrase") || !strings.Contains(r.stderr, "::error") {
		t.Errorf("the error should name the key file:\n%s", r)
	}
	if !strings.Contains(string(sum), "NOT saved") || strings.Contains(string(sum), "**Result:** success") {
		t.Errorf("the job summary should say the state was not saved:\n%s", sum)
	}
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=", "DEPLOYER_SECRETS_PASSPHRASE_FILE=" + keyFile, "PULUMI_CONFIG_PASSPHRASE="}
	p.mustRun(0, "state", "push", "deployer-errored-qs-dev.json", "-e", "dev", "--yes")
	r = p.mustRun(0, "state", "show", "-e", "dev", "--show-secrets", "--yes", "--json")
	if !strings.Contains(r.stdout, "ak-0123456789abcdef") {
		t.Errorf("the pushed state should open with the key file:\n%s", r)
	}
}

// keylessYAML: no secret in config, so a deploy without a key runs; db
// generates a numeric, a string and a boolean secret output
// (keylessScript).
const keylessYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      db:
        kind: Command
        command:
          create: sh db.sh
          delete: "true"
`

const keylessScript = `cat >/dev/null
printf '{"password": %s, "api_token": "twin-secret-%s", "tls_secret": true}' "$((98765432100 + 1))" "value" > "$DEPLOYER_OUTPUTS"
`

// After a deploy with a numeric, a boolean and a string secret in config
// and in generated outputs (one component fails, so the error is recorded)
// and a plan posted as a pull-request comment, and a deploy of a stack
// whose outputs are such secrets under CI without a key (its state goes to
// the errored file, its generated key to a 0600 file), no file the runs wrote or changed (state,
// history, lock records, the audit log, the errored state and its key
// file, the job summary, the step outputs, their home and temporary
// directories) and no request sent to the GitHub API (the comment body)
// holds any of them; the boolean is looked for as its key-value pair.
func TestSecurityNoFileTheRunTouchedHoldsASecret(t *testing.T) {
	g := newFakeGitHub(t)
	p := newProject(t, typedSecretYAML)
	root := p.dir
	keyless := &project{t: t, dir: filepath.Join(root, "keyless")}
	p.write("db.sh", typedDBScript)
	p.write("app.sh", typedAppScript)
	keyless.write("deployer.yaml", keylessYAML)
	keyless.write("db.sh", keylessScript)
	for _, d := range []string{"tmp", "home"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]bool{}
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			before[path] = true
		}
		return nil
	})
	ci := append(prEnv(t, g), "TMPDIR="+filepath.Join(root, "tmp"), "HOME="+filepath.Join(root, "home"),
		"GITHUB_STEP_SUMMARY="+filepath.Join(root, "summary.md"), "GITHUB_OUTPUT="+filepath.Join(root, "outputs"))
	p.env = append([]string{"DEPLOYER_SECRETS_PASSPHRASE=typed-pass", "PULUMI_CONFIG_PASSPHRASE="}, ci...)
	p.mustRun(1, "deploy", "-e", "dev", "--yes", "--audit-log", filepath.Join(root, "audit.log"))
	p.mustRun(0, "plan", "-e", "dev", "--github-comment", "--audit-log", filepath.Join(root, "audit.log"))
	keyless.env = append([]string{"DEPLOYER_SECRETS_PASSPHRASE=", "PULUMI_CONFIG_PASSPHRASE="}, ci...)
	keyless.mustRun(1, "deploy", "-e", "dev", "--yes", "--audit-log", filepath.Join(root, "audit.log"))

	comments, reqs := g.snapshot()
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "`api_token`: `(sensitive)`") {
		t.Fatalf("want the plan comment showing api_token (sensitive): %+v", comments)
	}
	for _, rq := range reqs {
		holdsNoTypedSecret(t, rq.Method+" "+rq.Path, rq.Body)
	}
	touched := map[string]bool{}
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || before[path] {
			return nil
		}
		touched[filepath.Base(path)] = true
		data, _ := os.ReadFile(path)
		holdsNoTypedSecret(t, path, string(data))
		return nil
	})
	for _, want := range []string{"state.json", "audit.log", "summary.md", "outputs", "deployer-errored-qs-dev.json", "deployer-errored-qs-dev.passphrase"} {
		if !touched[want] {
			t.Errorf("the runs wrote no %s; they wrote %v", want, touched)
		}
	}
}

// holdsNoTypedSecret fails the test when text (of what) holds one of
// typedSecrets, or the boolean secret as its key-value pair in any quoting.
func holdsNoTypedSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, v := range typedSecrets {
		if strings.Contains(text, v) {
			t.Errorf("%s holds %s", what, v)
		}
	}
	compact := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" \t\r\n\"'`", r) {
			return -1
		}
		return r
	}, text)
	if strings.Contains(compact, "tls_secret:true") {
		t.Errorf("%s holds the boolean secret in plain text", what)
	}
}

// The same grep after a run of the Pulumi engine: a numeric, a boolean and
// a string secret in a PulumiResource's properties (which the test
// provider returns as outputs too) and a password the provider generates
// are in no file under the project, Pulumi's backend included.
func TestSecurityNoFileAPulumiRunTouchedHoldsASecret(t *testing.T) {
	pp := newPulumiProject(t)
	p := pp.stack("typed", `stack: typed
backend: {state: file://../.deployer, lock: file://../.deployer}
environments: {dev: {}}
services:
  app:
    components:
      db:
        kind: PulumiResource
        config:
          type: "deployertest:index:Secret"
          properties: {length: 12, db_password: 87654321, pin: {secret: true, value: 4455667788}, tls_secret: true, api_token: twin-secret-value}
`)
	root := pp.dir
	if err := os.Mkdir(filepath.Join(root, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=typed-pass", "TMPDIR=" + filepath.Join(root, "tmp"), "GITHUB_ACTIONS=true", "CI=true",
		"GITHUB_RUN_ID=42", "GITHUB_STEP_SUMMARY=" + filepath.Join(root, "summary.md"), "GITHUB_OUTPUT=" + filepath.Join(root, "outputs")}
	p.mustRun(0, "deploy", "-e", "dev", "--yes", "--audit-log", filepath.Join(root, "audit.log"))
	generated := secretPassword(t, p.mustRun(0, "state", "show", "-e", "dev", "--show-secrets", "--yes", "--json").stdout)
	files := 0
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(path) == "deployer.yaml" {
			return nil
		}
		files++
		data, _ := os.ReadFile(path)
		holdsNoTypedSecret(t, path, string(data))
		if strings.Contains(string(data), generated) {
			t.Errorf("%s holds the generated password", path)
		}
		return nil
	})
	holdsNoTypedSecret(t, "Pulumi's exported state", pp.pulumi("typed", "dev", "stack", "export", "--stack", "organization/typed/dev"))
	if files < 5 {
		t.Errorf("the run wrote %d files; want deployer's state and history, Pulumi's backend, the audit log and the summary at least", files)
	}
}

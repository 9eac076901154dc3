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

// After a deploy with a numeric, a boolean and a string secret in config
// and in generated outputs (one component fails, so the error is recorded),
// no file the run wrote or changed (state, history, lock records, the audit
// log, the job summary, the step outputs, its home and temporary
// directories) holds any of them; the boolean is looked for as its
// key-value pair.
func TestSecurityNoFileTheRunTouchedHoldsASecret(t *testing.T) {
	p := newProject(t, typedSecretYAML)
	p.write("db.sh", typedDBScript)
	p.write("app.sh", typedAppScript)
	root := p.dir
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
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=typed-pass", "PULUMI_CONFIG_PASSPHRASE=", "TMPDIR=" + filepath.Join(root, "tmp"),
		"HOME=" + filepath.Join(root, "home"), "GITHUB_ACTIONS=true", "CI=true", "GITHUB_RUN_ID=42",
		"GITHUB_STEP_SUMMARY=" + filepath.Join(root, "summary.md"), "GITHUB_OUTPUT=" + filepath.Join(root, "outputs")}
	p.mustRun(1, "deploy", "-e", "dev", "--yes", "--audit-log", filepath.Join(root, "audit.log"))
	touched := 0
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || before[path] {
			return nil
		}
		touched++
		data, _ := os.ReadFile(path)
		for _, v := range typedSecrets {
			if strings.Contains(string(data), v) {
				t.Errorf("%s holds %s", path, v)
			}
		}
		if compact := strings.Join(strings.Fields(string(data)), ""); strings.Contains(compact, `"tls_secret":true`) {
			t.Errorf("%s holds the boolean secret in plain text", path)
		}
		return nil
	})
	if touched < 5 {
		t.Errorf("the run wrote %d files; want state, history, audit log, summary and outputs at least", touched)
	}
}

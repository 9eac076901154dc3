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

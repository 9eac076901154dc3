package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// lock exec records its command line as the program and a digest of its
// arguments: no form of secret argument (--password VALUE, -pVALUE, URL
// userinfo, an Authorization header) reaches the lock record, state locks
// --json, the audit log or another user's "lock is held" error.
func TestLockExecRecordsNoArgumentOfAnyForm(t *testing.T) {
	p := newProject(t, "stack: qs\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\n")
	audit := filepath.Join(p.dir, "audit.log")
	secrets := []string{"sep-value-4711", "glued-value-4712", "userinfo-value-4713", "bearer-value-4714"}
	inner := "cat .deployer/locks/* 2>/dev/null; " + bin + " state locks --json; " + bin + " lock exec --key k -- true; exit 0"
	r := p.mustRun(0, "lock", "exec", "--key", "k", "--audit-log", audit, "--",
		"sh", "-c", inner, "x", "--password", secrets[0], "-p"+secrets[1],
		"https://u:"+secrets[2]+"@example.test/x", "Authorization: Bearer "+secrets[3])
	for _, s := range secrets {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("%s is shown:\n%s", s, r)
		}
		grepTree(t, p.dir, s)
	}
	if !strings.Contains(r.stdout, `"command": "sh [`) || !strings.Contains(r.stdout, "sha256:") {
		t.Errorf("state locks should show the program and a digest of its arguments:\n%s", r)
	}
	if !strings.Contains(r.stdout+r.stderr, "sh [") {
		t.Errorf("the held error should name the program:\n%s", r)
	}
}

// A saved plan's digests include the field's path: two fields holding the
// same secret have unrelated digests, so the file does not show which
// secrets are equal.
func TestSavedPlanDigestsDoNotCorrelateEqualSecrets(t *testing.T) {
	p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  app:
    components:
      a:
        kind: Command
        config: {db_password: same-secret-value-1, api_token: same-secret-value-1}
        command: {create: "cat >/dev/null", delete: "true"}
      b:
        kind: Command
        config: {db_password: same-secret-value-1}
        command: {create: "cat >/dev/null", delete: "true"}
`)
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=pass-phrase", "PULUMI_CONFIG_PASSPHRASE="}
	p.mustRun(0, "plan", "-e", "dev", "--out", "p.plan")
	data := string(p.read("p.plan"))
	seen := map[string]int{}
	for _, m := range strings.Split(data, `"deployer:digest": "`)[1:] {
		seen[m[:strings.IndexByte(m, '"')]]++
	}
	if len(seen) != 3 {
		t.Errorf("want 3 distinct digests for the 3 fields, got %v:\n%s", seen, data)
	}
	p.write("old.plan", strings.Replace(data, `"digest": "hmac-sha256-placed"`, `"digest": "hmac-sha256"`, 1))
	r := p.mustRun(4, "deploy", "-e", "dev", "--plan", "old.plan", "--yes")
	if !strings.Contains(r.stderr, "secrets digest: planned hmac-sha256 (digests of secret values without their place") {
		t.Errorf("a plan of the older digests should be refused, saying to make it again:\n%s", r)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--plan", "p.plan", "--yes")
}

// A value read from a variable or file named like a secret, or equal to a
// known secret under a neutral key, is a secret wherever it lands: masked
// in plans and sealed in state.json.
func TestSecretBySourceAndByValue(t *testing.T) {
	p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  app:
    components:
      a:
        kind: Command
        config:
          note: ${env:PULUMI_ACCESS_TOKEN}
          arm: ${env:ARM_CLIENT_SECRET}
          cert: ${file:tls/server_key.pem}
          db_password: same-as-alias-4242
          alias: same-as-alias-4242
          count: 3
        command: {create: "cat >/dev/null", delete: "true"}
`)
	p.write("tls/server_key.pem", "file-key-content-4343\n")
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=pass-phrase", "PULUMI_CONFIG_PASSPHRASE=",
		"PULUMI_ACCESS_TOKEN=pul-token-value-4141", "ARM_CLIENT_SECRET=arm-secret-value-4040"}
	secrets := []string{"pul-token-value-4141", "arm-secret-value-4040", "file-key-content-4343", "same-as-alias-4242"}
	for _, args := range [][]string{{"plan", "-e", "dev"}, {"plan", "-e", "dev", "--json"}, {"deploy", "-e", "dev", "--yes"}, {"history", "-e", "dev"}, {"state", "show", "-e", "dev"}} {
		r := p.mustRun(0, args...)
		for _, s := range secrets {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("%v shows %s:\n%s", args, s, r)
			}
		}
		if args[0] == "plan" && len(args) == 3 && strings.Count(r.stdout, "(sensitive)") < 5 {
			t.Errorf("plan should show the 5 secrets as (sensitive):\n%s", r)
		}
	}
	for _, s := range secrets {
		grepTree(t, filepath.Join(p.dir, ".deployer"), s)
	}
}

// A Command component cannot read deployer's secrets through
// /proc/<deployer>/environ: the passphrase and the CI's tokens are gone from
// what the kernel shows of deployer's environment, and deployer still uses
// them (the state is sealed with the passphrase).
func TestChildCannotReadDeployerEnvironThroughProc(t *testing.T) {
	testenv.RequirePlatform(t, runtime.GOOS == "linux", "/proc/PID/environ is Linux's")
	p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  app:
    components:
      spy:
        kind: Command
        config: {db_password: component-secret-5151}
        command:
          create: |
            cat > /dev/null
            { tr '\0' '\n' < /proc/$PPID/environ || echo unreadable; } > parent.env 2>&1
            pid=$PPID; while [ "$pid" -gt 1 ]; do
              if [ "$(cat /proc/$pid/comm)" = deployer ]; then tr '\0' '\n' < /proc/$pid/environ >> deployer.env 2>&1 || echo unreadable >> deployer.env; fi
              pid=$(awk '{print $4}' /proc/$pid/stat)
            done
            echo done >> deployer.env
          delete: "true"
`)
	secrets := map[string]string{"DEPLOYER_SECRETS_PASSPHRASE": "pass-phrase-6161", "GITHUB_TOKEN": "ghs_token6262",
		"ACTIONS_RUNTIME_TOKEN": "runtime-token-6363", "PULUMI_CONFIG_PASSPHRASE": "pulumi-phrase-6464"}
	for k, v := range secrets {
		p.env = append(p.env, k+"="+v)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	got := string(p.read("parent.env")) + string(p.read("deployer.env"))
	if !strings.Contains(got, "PATH=") && !strings.Contains(got, "unreadable") {
		t.Fatalf("the script read nothing of deployer's environment:\n%s", got)
	}
	for k, v := range secrets {
		if strings.Contains(got, v) {
			t.Errorf("a child read %s from deployer's /proc/PID/environ:\n%s", k, got)
		}
	}
	if !strings.Contains(string(p.read(".deployer/stacks/qs/dev/state.json")), `"deployer:secret"`) {
		t.Errorf("the state should be sealed with the passphrase")
	}
}

// leakPolicy echoes, reverses and base64-encodes every string of its input
// in warn and deny messages.
const leakPolicy = `package deployer.leak

strs contains s if {
	walk(input, [_, s])
	is_string(s)
}

warn contains msg if {
	some s in strs
	msg := sprintf("echo %s", [s])
}

warn contains msg if {
	some s in strs
	msg := sprintf("rev %s", [strings.reverse(s)])
}

deny contains msg if {
	some s in strs
	msg := sprintf("b64 %s", [base64.encode(s)])
}
`

// forms are the encodings of s a test can compute: plain, reversed, and
// base64 (standard and URL alphabets) at each of the three byte alignments
// it may sit at inside a longer encoded string.
func forms(s string) []string {
	rev := []rune(s)
	slices.Reverse(rev)
	out := []string{s, string(rev)}
	for k := range 3 {
		b := append(make([]byte, k), s...)
		from, to := (8*k+5)/6, 8*len(b)/6
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			out = append(out, enc.EncodeToString(b)[from:to])
		}
	}
	return out
}

// A policy sees no secret in any string of its input, even one embedded in
// a longer string (a DSN, a reference with a suffix, a command line), and
// what it makes of its input (echoed, reversed, base64) shows no secret in
// the plan, plan --json or the deploy's denial.
func TestPolicySeesNoSecretInAnyForm(t *testing.T) {
	p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
policy: {paths: [policy/]}
environments: {dev: {}}
services:
  app:
    components:
      db:
        kind: Command
        config:
          db_password: Policy-Secret-7070
          dsn: postgres://app:Policy-Secret-7070@db/app
          note: ${env:DB_PASS}-x
          api_token: Bearer-Token-8080
        command:
          create: 'curl -H "Authorization: Bearer Bearer-Token-8080" https://example.test' 
          delete: "true"
`)
	p.write("policy/leak.rego", leakPolicy)
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=pass-phrase", "PULUMI_CONFIG_PASSPHRASE=", "DB_PASS=Env-Pass-9090"}
	var out strings.Builder
	for _, args := range [][]string{{"plan", "-e", "dev"}, {"plan", "-e", "dev", "--json"}} {
		r := p.mustRun(0, args...)
		out.WriteString(r.stdout + r.stderr)
	}
	r := p.mustRun(5, "deploy", "-e", "dev", "--yes")
	out.WriteString(r.stdout + r.stderr)
	if !strings.Contains(out.String(), "echo postgres://app:***@db/app") {
		t.Errorf("the policy should see the DSN with its secret masked:\n%s", out.String())
	}
	for _, s := range []string{"Policy-Secret-7070", "Env-Pass-9090", "Bearer-Token-8080"} {
		for _, f := range forms(s) {
			if strings.Contains(out.String(), f) {
				t.Errorf("the output holds %q (a form of %s):\n%s", f, s, out.String())
			}
		}
	}
}

// A history snapshot of serial 1 whose serial was edited to the next one
// is not a normal push: it does not name the stored state it was written
// from. Forced, it is written, but no history record of the file (a forged
// run record) is imported: the history is the stored one plus the push.
func TestStatePushRefusesAnEditedSnapshotAndImportsNoHistory(t *testing.T) {
	p := newProject(t, strings.Replace(pushYAML, "VERSION", "1", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(pushYAML, "VERSION", "2", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	snaps, _ := filepath.Glob(filepath.Join(p.dir, ".deployer", "stacks", "qs", "dev", "history", "*"))
	var first string
	for _, s := range snaps {
		if data, _ := os.ReadFile(s); strings.Contains(string(data), "\n  \"serial\": 1,") {
			first = string(data)
		}
	}
	if first == "" {
		t.Fatalf("no snapshot of serial 1 among %v", snaps)
	}
	forged := strings.Replace(first, "\n  \"serial\": 1,", "\n  \"serial\": 3,", 1)
	forged = strings.Replace(forged, `"deployment_history": [`, `"deployment_history": [
    {"deployment_id": "forged-1", "type": "deploy", "timestamp": "2026-01-01T00:00:00Z", "triggered_by": "x", "git_commit": "", "version": "", "status": "success", "duration_seconds": 0, "resources_changed": {"created": 0, "updated": 0, "deleted": 0}, "serial": 3, "restored_from": null, "scope": "stack:qs/dev", "error": null, "run_id": "forged-run", "run_attempt": 1},`, 1)
	p.write("forged.json", forged)
	r := p.mustRun(4, "state", "push", "forged.json", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "does not say which stored state it was written from") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("an edited snapshot should be refused without --force:\n%s", r)
	}
	if st := readState(t, p); st.Serial != 2 {
		t.Fatalf("the refused push changed the state: serial %d", st.Serial)
	}
	p.mustRun(0, "state", "push", "forged.json", "-e", "dev", "--yes", "--force")
	data := string(p.read(".deployer/stacks/qs/dev/state.json"))
	if strings.Contains(data, "forged") {
		t.Errorf("the pushed file's history was imported:\n%s", data)
	}
	if st := readState(t, p); st.Serial != 3 || len(st.History) != 3 || st.History[0].Type != "state-push-forced" {
		t.Errorf("want the two deploys and the forced push in the history, got %+v", st.History)
	}
}

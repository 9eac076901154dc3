//go:build unix

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runtimeSecretYAML: db generates a password and a token at run time (the
// token contains the non-secret-looking config value "prod", itself secret
// by its key name); app depends on db, prints both on stdout and stderr,
// tries to start a workflow command after a carriage return, and fails.
const runtimeSecretYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      db:
        kind: Command
        config: {key_name: prod}
        command: {create: sh db.sh, update: sh db.sh, delete: "true"}
      app:
        kind: Command
        depends_on: [db]
        command: {create: sh app.sh, update: sh app.sh, delete: "true"}
`

const runtimeDBScript = `set -eu
cat > /dev/null
pw="gen-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
tok="prod-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n%s\n' "$pw" "$tok" > "$SECRET_SINK"
printf '{"password":"%s","api_token":"%s","marked":{"secret":true,"value":"%s-m"},"host":"db"}' "$pw" "$tok" "$pw" > "$DEPLOYER_OUTPUTS"
`

const runtimeAppScript = `cat > /dev/null
echo "pw=$DEPLOYER_DEP_S_DB_PASSWORD tok=$DEPLOYER_DEP_S_DB_API_TOKEN marked=$DEPLOYER_DEP_S_DB_MARKED"
echo "stderr pw=$DEPLOYER_DEP_S_DB_PASSWORD tok=$DEPLOYER_DEP_S_DB_API_TOKEN" >&2
printf 'progress\r::error::injected %s\n' "$DEPLOYER_DEP_S_DB_API_TOKEN"
if [ -f fail.flag ]; then exit 1; fi
`

func TestSecretsCreatedAtRunTimeAreNeverPrintedOrStored(t *testing.T) {
	for _, actions := range []bool{false, true} {
		name := "local"
		if actions {
			name = "github-actions"
		}
		t.Run(name, func(t *testing.T) {
			p := newProject(t, runtimeSecretYAML)
			p.write("db.sh", runtimeDBScript)
			p.write("app.sh", runtimeAppScript)
			p.write("fail.flag", "")
			sink := filepath.Join(t.TempDir(), "generated")
			audit := filepath.Join(p.dir, "audit.log")
			p.env = []string{"SECRET_SINK=" + sink, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}
			if actions {
				p.env = append(p.env, "GITHUB_ACTIONS=true", "GITHUB_RUN_ID=42",
					"GITHUB_STEP_SUMMARY="+filepath.Join(p.dir, "summary.md"), "GITHUB_OUTPUT="+filepath.Join(p.dir, "github-output"))
			}
			var outs []result
			outs = append(outs, p.mustRun(1, "deploy", "-e", "dev", "--yes", "--audit-log", audit))
			outs = append(outs, p.mustRun(1, "deploy", "-e", "dev", "--yes", "--audit-log", audit, "--json"))
			outs = append(outs, p.mustRun(0, "history", "-e", "dev", "--json"))
			outs = append(outs, p.mustRun(0, "state", "show", "-e", "dev", "--json"))
			outs = append(outs, p.mustRun(2, "plan", "-e", "dev", "--out", "saved.plan", "--detailed-exitcode"))
			// app succeeds: its recorded inputs hold digests of db's secrets.
			if err := os.Remove(filepath.Join(p.dir, "fail.flag")); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, p.mustRun(0, "deploy", "-e", "dev", "--yes", "--audit-log", audit))
			if st := p.state("qs", "dev"); st.Resources["s/app"].Status != "ready" {
				t.Fatalf("app should be ready now: %+v", st.Resources["s/app"])
			}

			data, err := os.ReadFile(sink)
			if err != nil {
				t.Fatal(err)
			}
			gen := strings.Fields(string(data)) // db ran once: app's failure leaves it alone
			if len(gen) != 2 {
				t.Fatalf("db should have generated 2 values: %q", gen)
			}
			first := outs[0]
			for _, want := range []string{"[s/app] pw=*** tok=*** marked=***", "[s/app] stderr pw=*** tok=***", "[s/app] ::error::injected ***"} {
				if !strings.Contains(first.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, first)
				}
			}
			for _, line := range strings.Split(first.stderr, "\n") {
				if strings.HasPrefix(line, "::error::") || strings.Contains(line, "\r") {
					t.Errorf("a component started a workflow command of its own: %q", line)
				}
			}
			if actions {
				// Announced when read, before app printed anything.
				for _, v := range gen[:2] {
					i, j := strings.Index(first.stderr, "::add-mask::"+v+"\n"), strings.Index(first.stderr, "[s/app] create:")
					if i < 0 || j < i {
						t.Errorf("%s should be announced before app starts:\n%s", v, first)
					}
				}
			}
			for _, v := range append(gen, gen[0]+"-m", strings.TrimPrefix(gen[1], "prod")) {
				for _, o := range outs {
					for _, line := range strings.Split(o.stdout+"\n"+o.stderr, "\n") {
						if strings.Contains(line, v) && !strings.HasPrefix(line, "::add-mask::") {
							t.Errorf("output shows %q: %q", v, line)
						}
					}
				}
				grepTree(t, p.dir, v)
			}
			// Dependents record digests of secret outputs: never in plain text.
			for _, v := range append(gen, gen[0]+"-m") {
				sum := sha256.Sum256([]byte(strconv.Quote(v)))
				grepTree(t, p.dir, hex.EncodeToString(sum[:]))
			}
		})
	}
}

// A component returns a secret while no passphrase is set: the state
// cannot be sealed, so the errored file is, under a generated passphrase
// the error never shows (it is in a 0600 file it names); state push with
// it writes the state.
func TestSecretOutputWithoutPassphraseIsSavedUnderAGeneratedOne(t *testing.T) {
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
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=", "PULUMI_CONFIG_PASSPHRASE=", "CI="}
	// A symlink where the errored file goes is replaced, not followed.
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	errored := filepath.Join(p.dir, "deployer-errored-qs-dev.json")
	if err := os.Symlink(victim, errored); err != nil {
		t.Fatal(err)
	}
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "deployer-errored-qs-dev.passphrase") {
		t.Fatalf("the error should name the generated passphrase's file:\n%s", r)
	}
	gen := strings.TrimSpace(string(p.read("deployer-errored-qs-dev.passphrase")))
	fi, err := os.Lstat(errored)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("errored file: %v %v, want a regular file of mode 600", fi, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	grepTree(t, p.dir, "ak-0123456789abcdef")
	if strings.Contains(r.stdout+r.stderr, "ak-0123456789abcdef") {
		t.Errorf("the output shows the key:\n%s", r)
	}
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=" + gen, "PULUMI_CONFIG_PASSPHRASE="}
	p.mustRun(0, "state", "push", "deployer-errored-qs-dev.json", "-e", "dev", "--yes")
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	r = p.mustRun(0, "state", "show", "-e", "dev", "--show-secrets", "--yes", "--json")
	if !strings.Contains(r.stdout, "ak-0123456789abcdef") {
		t.Errorf("the pushed state should open with the generated passphrase:\n%s", r)
	}
}

// The Pulumi engine's preflight names the state backend it cannot use
// with its password redacted.
func TestPulumiPreflightRedactsTheBackendPassword(t *testing.T) {
	p := newProject(t, `stack: s
backend: {state: "postgres://app:Sup3rS3cretPw@127.0.0.1:1/deployer", lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      b:
        kind: PulumiResource
        config: {type: "random:index/randomString:RandomString", properties: {length: 8}}
`)
	for _, args := range [][]string{{"deploy", "-e", "dev", "--yes"}, {"deploy", "-e", "dev", "--yes", "--json"}} {
		r := p.mustRun(1, args...)
		if !strings.Contains(r.stderr, "postgres://app:xxxxx@127.0.0.1:1/deployer") || strings.Contains(r.stdout+r.stderr, "Sup3rS3cretPw") {
			t.Errorf("%v: the password should be redacted:\n%s", args, r)
		}
	}
}

// A saved plan holds no secret, also where a value is secret by its
// content (a string that embeds a password) rather than its key name.
func TestSavedPlanHoldsNoSecretByContent(t *testing.T) {
	p := newProject(t, `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      c:
        kind: Command
        config: {password: "${env:PW}", greeting: "connect with ${env:PW} please"}
        command: {create: "cat >/dev/null", delete: "true"}
`)
	const pw = "pw-saved-plan-4e1a9c"
	p.env = []string{"PW=" + pw, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}
	r := p.mustRun(2, "plan", "-e", "dev", "--out", "saved.plan", "--detailed-exitcode")
	if strings.Contains(r.stdout+r.stderr, pw) || !strings.Contains(r.stdout, "connect with *** please") {
		t.Errorf("plan output:\n%s", r)
	}
	grepTree(t, filepath.Join(p.dir, "saved.plan"), pw)
	if fi, err := os.Stat(filepath.Join(p.dir, "saved.plan")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("saved plan mode: %v %v, want 600", fi, err)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--plan", "saved.plan", "--yes")
}

//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CI's secrets in the tests of what is masked: the job's token, the
// runner's tokens (a future ACTIONS_*_TOKEN too) and AWS secret keys.
var ciSecrets = map[string]string{
	"AWS_SECRET_ACCESS_KEY":          "wJalrXUtnFEMI-e2e-K7MDENG-bPxRfiCY",
	"AWS_SESSION_TOKEN":              "IQoJb3JpZ2luX2VjE-e2e-session-9a8b7c",
	"ACTIONS_RUNTIME_TOKEN":          "eyJ0eXAi-e2e-runtime-4d5e6f",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "eyJhbGci-e2e-idtoken-1a2b3c",
	"ACTIONS_RESULTS_TOKEN":          "eyJraWQi-e2e-results-7f8e9d",
}

// ciSecretsYAML reads the CI's secrets under keys that do not look secret
// (note, blob), and two values of its own under keys that do (api_key from
// a file, db_pass from a variable).
const ciSecretsYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      api:
        kind: Command
        config:
          region: eu-west-1
          note: ${env:AWS_SECRET_ACCESS_KEY}
          blob: ${file:ci.env}
          api_key: ${file:key.txt}
          db_pass: ${env:MY_DB_PW}
        command:
          create: 'cat >/dev/null; echo "note $DEPLOYER_CONFIG_NOTE blob $DEPLOYER_CONFIG_BLOB"; echo "key $DEPLOYER_CONFIG_API_KEY pw $DEPLOYER_CONFIG_DB_PASS" >&2'
          delete: "true"
`

const (
	fileKey  = "file-held-api-key-7731"
	envDBPw  = "env-held-db-pass-5519"
	ciRegion = "eu-west-1"
)

// The CI's secrets in deployer's environment are masked from the first
// byte of output: announced with ::add-mask:: before anything else, never
// printed by the plan, the job summary or the pull request comment, even
// when deployer.yaml reads them under keys that do not look secret: read
// so, they are secrets of the config, as are values read by
// ${env:}/${file:} under keys that look secret: shown (sensitive), masked
// and sealed.
func TestKnownCISecretsAreMaskedFromTheFirstByte(t *testing.T) {
	g := newFakeGitHub(t)
	p := newProject(t, ciSecretsYAML)
	p.write("key.txt", fileKey+"\n")
	var blob []string
	secrets := []string{ghToken, fileKey, envDBPw}
	for _, name := range []string{"AWS_SESSION_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_RESULTS_TOKEN"} {
		blob = append(blob, name+"="+ciSecrets[name])
	}
	blob = append(blob, "GITHUB_TOKEN="+ghToken)
	p.write("ci.env", strings.Join(blob, " ")+"\n")
	p.env = append([]string{"MY_DB_PW=" + envDBPw, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}, prEnv(t, g)...)
	for name, v := range ciSecrets {
		p.env = append(p.env, name+"="+v)
		secrets = append(secrets, v)
	}

	r := p.mustRun(0, "plan", "-e", "dev", "--github-comment")
	// The CI's secrets are announced before any other line.
	head := map[string]bool{}
	for _, l := range strings.Split(r.stderr, "\n") {
		v, ok := strings.CutPrefix(l, "::add-mask::")
		if !ok {
			break
		}
		head[v] = true
	}
	for name, v := range ciSecrets {
		if !head[v] {
			t.Errorf("%s should be announced with ::add-mask:: before any other line:\n%s", name, r.stderr)
		}
	}
	if !head[ghToken] {
		t.Errorf("GITHUB_TOKEN should be announced with ::add-mask:: before any other line:\n%s", r.stderr)
	}
	summary, err := os.ReadFile(envValue(p.env, "GITHUB_STEP_SUMMARY"))
	if err != nil {
		t.Fatal(err)
	}
	comments, reqs := g.snapshot()
	if len(comments) != 1 {
		t.Fatalf("want the plan comment, got %+v\n%s", comments, r)
	}
	commentHas(t, "the comment", comments[0].Body, "`api_key`: `(sensitive)`", "`db_pass`: `(sensitive)`", `"`+ciRegion+`"`, "`note`: `(sensitive)`", "`blob`: `(sensitive)`")
	var sent strings.Builder
	for _, rq := range reqs {
		sent.WriteString(rq.Body)
	}
	r2 := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	for _, v := range secrets {
		for _, line := range strings.Split(r.stdout+r.stderr+r2.stdout+r2.stderr, "\n") {
			if strings.Contains(line, v) && !strings.HasPrefix(line, "::add-mask::") {
				t.Errorf("%s is printed: %q", v, line)
			}
		}
		for what, text := range map[string]string{"job summary": string(summary), "comment requests": sent.String()} {
			if strings.Contains(text, v) {
				t.Errorf("the %s holds %s:\n%s", what, v, text)
			}
		}
	}
	if !strings.Contains(r2.stdout+r2.stderr, "note *** blob ") || !strings.Contains(r2.stdout+r2.stderr, "key *** pw ***") {
		t.Errorf("the component's output should show the values masked:\n%s", r2)
	}
	for _, v := range append([]string{fileKey, envDBPw}, secrets...) {
		grepTree(t, filepath.Join(p.dir, ".deployer"), v)
	}
}

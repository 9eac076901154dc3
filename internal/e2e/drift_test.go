//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// driftYAML is a stack whose app/web component keeps its live state in
// live/web.json (its "cloud"): create and update write it from config,
// read prints it, delete removes it. app/batch has no read command.
const driftYAML = `stack: shop
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  app:
    components:
      web:
        kind: Command
        config: {replicas: 2, image: {tag: v1}, api_token: tok-Secret-771}
        command:
          create: mkdir -p live && printf '{"replicas":%s,"image":{"tag":"%s"},"api_token":"%s"}' "$DEPLOYER_CONFIG_REPLICAS" "$DEPLOYER_CONFIG_IMAGE_TAG" "$DEPLOYER_CONFIG_API_TOKEN" > live/web.json
          read: if [ -n "${READ_FAILS:-}" ]; then echo "cannot reach the API" >&2; exit 7; fi; cat live/web.json 2>/dev/null || true
          delete: rm -f live/web.json
      batch:
        kind: Command
        command: {create: "true"}
`

func driftProject(t *testing.T) *project {
	p := newProject(t, driftYAML)
	p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}
	return p
}

// Command drift end to end: deploy records what read printed; a refresh
// right after finds no drift; a change behind deployer's back is drift
// naming the field (plan --refresh --detailed-exitcode exits 2); a secret
// field is masked; a failing read names the component; a vanished live
// state is reported as gone.
func TestCommandDriftWithRead(t *testing.T) {
	p := driftProject(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	var st struct {
		Resources map[string]struct {
			ActualState map[string]any `json:"actual_state"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(p.read(".deployer/stacks/shop/dev/state.json"), &st); err != nil {
		t.Fatal(err)
	}
	live, _ := st.Resources["app/web"].ActualState["live"].(map[string]any)
	if live["replicas"] != 2.0 || live["image"].(map[string]any)["tag"] != "v1" {
		t.Fatalf("the deploy should record read's JSON in actual_state.live: %v", st.Resources["app/web"].ActualState)
	}
	grepTree(t, filepath.Join(p.dir, ".deployer"), "tok-Secret-771")

	r := p.mustRun(0, "plan", "-e", "dev", "--refresh", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "No drift") || !strings.Contains(r.stdout, "No changes") {
		t.Fatalf("a refresh right after the deploy should find no drift:\n%s", r)
	}

	// Behind deployer's back: someone scales web to 5 and rotates its token.
	p.write("live/web.json", `{"replicas": 5, "image": {"tag": "v1"}, "api_token": "tok-Other-9921"}`)
	r = p.mustRun(2, "plan", "-e", "dev", "--refresh", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "! app/web") || !strings.Contains(r.stdout, "replicas: 2 -> 5") ||
		!strings.Contains(r.stdout, "api_token: (sensitive) -> (sensitive)") || strings.Contains(r.stdout, "image") {
		t.Errorf("drift should name replicas (2 -> 5) and the masked token, nothing else:\n%s", r)
	}
	if strings.Contains(r.stdout+r.stderr, "tok-Other-9921") || strings.Contains(r.stdout+r.stderr, "tok-Secret-771") {
		t.Errorf("the token should never be printed:\n%s", r)
	}
	// Without --detailed-exitcode drift is a report, not a failure; the
	// plan itself has no changes and deployer's state is not written.
	before := p.read(".deployer/stacks/shop/dev/state.json")
	r = p.mustRun(0, "plan", "-e", "dev", "--refresh")
	if strings.Contains(r.stdout, "Infrastructure matches the configuration") || !strings.Contains(r.stdout, "leaves the drift as it is") {
		t.Errorf("a plan with drift and no changes must not say the infrastructure matches:\n%s", r)
	}
	if string(p.read(".deployer/stacks/shop/dev/state.json")) != string(before) {
		t.Error("plan --refresh wrote the state")
	}
	r = p.mustRun(2, "plan", "-e", "dev", "--refresh", "--detailed-exitcode", "--json")
	var doc struct {
		Drift []struct {
			Address string `json:"address"`
			Fields  []struct {
				Path string `json:"path"`
				Old  any    `json:"old"`
				New  any    `json:"new"`
			} `json:"fields"`
		} `json:"drift"`
	}
	if err := json.Unmarshal([]byte(r.stderr[strings.LastIndex(strings.TrimSpace(r.stderr), "\n")+1:]), &doc); err != nil ||
		len(doc.Drift) != 1 || doc.Drift[0].Address != "app/web" || len(doc.Drift[0].Fields) != 2 ||
		doc.Drift[0].Fields[1].Path != "replicas" || doc.Drift[0].Fields[1].New != 5.0 {
		t.Errorf("--json drift on stderr: %v %+v\n%s", err, doc, r)
	}

	// A read that fails is an error naming the component and the command.
	p.env = append(p.env, "READ_FAILS=1")
	r = p.mustRun(1, "plan", "-e", "dev", "--refresh", "--detailed-exitcode")
	if !strings.Contains(r.stderr, "component app/web: read command") || !strings.Contains(r.stderr, "exited with code 7") ||
		!strings.Contains(r.stderr, "cannot reach the API") {
		t.Errorf("a failing read should name the component, its exit code and stderr:\n%s", r)
	}
	p.env = p.env[:len(p.env)-1]

	// The live thing is gone: read prints nothing.
	if err := os.Remove(filepath.Join(p.dir, "live/web.json")); err != nil {
		t.Fatal(err)
	}
	r = p.mustRun(2, "plan", "-e", "dev", "--refresh", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "! app/web: its resources no longer exist") {
		t.Errorf("a read printing nothing should report the component gone:\n%s", r)
	}
	// A deploy with changed config records the new live state: no drift after it.
	p.write("deployer.yaml", strings.Replace(driftYAML, "replicas: 2", "replicas: 3", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.mustRun(0, "plan", "-e", "dev", "--refresh", "--detailed-exitcode")

	// A new read command alone is a reviewed change that runs only read.
	yaml := strings.Replace(driftYAML, "replicas: 2", "replicas: 3", 1)
	p.write("deployer.yaml", strings.Replace(yaml, "cat live/web.json 2>/dev/null || true", "cat live/web.json 2>/dev/null || echo null", 1))
	r = p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "command.read:") {
		t.Errorf("a changed read should show as a command.read diff:\n%s", r)
	}
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if strings.Contains(r.stderr, "[app/web] create:") || strings.Contains(r.stderr, "[app/web] update:") || !strings.Contains(r.stderr, "[app/web] read:") {
		t.Errorf("a changed read alone should run only read:\n%s", r)
	}
	p.mustRun(0, "plan", "-e", "dev", "--refresh", "--detailed-exitcode")
}

// Under GitHub Actions, drift is a warning annotation per component naming
// its fields and a table in the job summary.
func TestCommandDriftIsAnnotatedInGitHubActions(t *testing.T) {
	p := driftProject(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("live/web.json", `{"replicas": 4, "image": {"tag": "v1"}, "api_token": "tok-Secret-771"}`)
	summary := filepath.Join(p.dir, "summary.md")
	p.env = append(p.env, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+summary, "GITHUB_OUTPUT=")
	r := p.mustRun(2, "plan", "-e", "dev", "--refresh", "--detailed-exitcode")
	if !strings.Contains(r.stderr, "::warning title=Drift in app/web::changed outside deployer: replicas") {
		t.Errorf("want a warning annotation naming app/web and replicas:\n%s", r)
	}
	if s := string(p.read("summary.md")); !strings.Contains(s, "| `app/web` | `replicas` | `2` | `4` |") {
		t.Errorf("the job summary should have the drift table:\n%s", s)
	} else if strings.Contains(s, "Infrastructure matches the configuration") || !strings.Contains(s, "leaves the drift as it is") {
		t.Errorf("the job summary of a plan with drift and no changes must not say the infrastructure matches:\n%s", s)
	}
}

// A scope where nothing can be read back is a clear error, not "No drift".
func TestRefreshWithoutReadCommandsSaysWhatToAdd(t *testing.T) {
	p := driftProject(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	r := p.mustRun(1, "plan", "-e", "dev", "--refresh", "--component", "app/batch")
	if !strings.Contains(r.stderr, "nothing in scope can be refreshed") || !strings.Contains(r.stderr, "command.read") {
		t.Errorf("want an error naming command.read:\n%s", r)
	}
}

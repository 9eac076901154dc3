//go:build unix

package e2e

// Refresh-only (docs/operations.md#refresh-only): what is live becomes the
// recorded state on approval, running nothing but reads, on the file
// backends and on S3 state with DynamoDB locks.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// refreshYAML: app/web keeps its live state in live/web.json; every
// command but read appends its name to ran.log, read appends to
// reads.log. app/batch cannot be read.
const refreshYAML = `stack: shop
%BACKEND%environments: {dev: {}}
services:
  app:
    components:
      web:
        kind: Command
        config: {replicas: 2}
        command:
          create: echo create >> ran.log; mkdir -p live && printf '{"replicas":%s,"api_token":"tok-Live-5521"}' "$DEPLOYER_CONFIG_REPLICAS" > live/web.json
          update: echo update >> ran.log; printf '{"replicas":%s,"api_token":"tok-Live-5521"}' "$DEPLOYER_CONFIG_REPLICAS" > live/web.json
          read: echo read >> reads.log; cat live/web.json 2>/dev/null || echo null
          delete: echo delete >> ran.log; rm -f live/web.json
      batch:
        kind: Command
        command: {create: echo create-batch >> ran.log, delete: echo delete-batch >> ran.log}
`

// liveReplicas is app/web's actual_state.live.replicas as the state records it.
func liveReplicas(t *testing.T, p *project) any {
	t.Helper()
	var st struct {
		Resources map[string]struct {
			ActualState map[string]any `json:"actual_state"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(p.mustRun(0, "state", "show", "-e", "dev", "--json").stdout), &st); err != nil {
		t.Fatal(err)
	}
	live, _ := st.Resources["app/web"].ActualState["live"].(map[string]any)
	return live["replicas"]
}

// TestRefreshOnlyRecordsWhatIsLive: with no drift a refresh-only says No
// changes and writes nothing; drift made outside deployer is shown (its
// secret masked) by plan and deploy --refresh-only, recorded on --yes as a
// serial of type refresh while only read ran, and the next plan is No
// changes; a component whose read says it is gone is shown and, on
// approval, only removed from the state.
func TestRefreshOnlyRecordsWhatIsLive(t *testing.T) {
	projectOnBackends(t, refreshYAML, func(t *testing.T, p *project, yaml string, _ []string) {
		p.env = append(p.env, "DEPLOYER_SECRETS_PASSPHRASE="+passphrase) // the live token is a secret
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		serial := p.remoteState("dev").Serial
		p.write("ran.log", "")

		r := p.mustRun(0, "deploy", "-e", "dev", "--refresh-only", "--yes")
		if !strings.Contains(r.stdout, "No changes.") || !strings.Contains(r.stdout, "Skipped (cannot be read, left as recorded): app/batch") {
			t.Errorf("a refresh with no drift should say No changes and name the component it cannot read:\n%s", r)
		}
		if got := p.remoteState("dev").Serial; got != serial {
			t.Errorf("a refresh with no drift wrote serial %d (was %d)", got, serial)
		}

		// Behind deployer's back: web is scaled to 5 and its token rotated.
		p.write("live/web.json", `{"replicas": 5, "api_token": "tok-Other-8812"}`)
		r = p.mustRun(2, "plan", "-e", "dev", "--refresh-only", "--detailed-exitcode")
		if !strings.Contains(r.stdout, "~ app/web") || !strings.Contains(r.stdout, "replicas: 2 -> 5") ||
			!strings.Contains(r.stdout, "api_token: (sensitive) -> (sensitive)") || strings.Contains(r.stdout+r.stderr, "tok-Other-8812") {
			t.Errorf("plan --refresh-only should show the drift, the token masked:\n%s", r)
		}
		p.mustRun(2, "deploy", "-e", "dev", "--refresh-only") // no terminal to ask on: refused
		p.write("reads.log", "")
		r = p.mustRun(0, "deploy", "-e", "dev", "--refresh-only", "--yes")
		if !strings.Contains(r.stdout, "replicas: 2 -> 5") || !strings.Contains(r.stdout, "1 updated, 0 removed") {
			t.Errorf("deploy --refresh-only should show the drift and what it recorded:\n%s", r)
		}
		if log := string(p.read("ran.log")); log != "" {
			t.Errorf("a refresh-only ran more than read: %q", log)
		}
		if log := string(p.read("reads.log")); log != "read\n" {
			t.Errorf("a refresh-only should read web once: %q", log)
		}
		if got := liveReplicas(t, p); got != 5.0 {
			t.Errorf("actual_state.live.replicas after the refresh: %v, want 5", got)
		}
		h := p.history("dev").DeploymentHistory[0]
		if h.Type != "refresh" || h.Status != "success" || h.Serial != serial+1 || h.TriggeredBy == "" {
			t.Errorf("the refresh's history record: %+v (serial was %d)", h, serial)
		}
		if out := p.mustRun(0, "history", "-e", "dev").stdout; !strings.Contains(out, "refresh") {
			t.Errorf("history should show the refresh:\n%s", out)
		}
		if r := p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode"); !strings.Contains(r.stdout, "No changes") {
			t.Errorf("the plan after the refresh should be No changes:\n%s", r)
		}
		p.mustRun(0, "plan", "-e", "dev", "--refresh", "--detailed-exitcode")

		// A new read command alone shows the drift it reads before it is
		// recorded, and records exactly that, running nothing else.
		p.write("live/web.json", `{"replicas": 7, "api_token": "tok-Other-8812"}`)
		p.write("deployer.yaml", strings.Replace(yaml, "cat live/web.json", "cat ./live/web.json", 1))
		r = p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode")
		if !strings.Contains(r.stdout, "command.read:") || !strings.Contains(r.stdout, "read now, recorded as live: replicas: 5 -> 7") {
			t.Errorf("a changed read alone should show the drift it reads:\n%s", r)
		}
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); log != "" {
			t.Errorf("a changed read alone ran more than read: %q", log)
		}
		if got := liveReplicas(t, p); got != 7.0 {
			t.Errorf("actual_state.live.replicas after the read change: %v, want 7", got)
		}

		// The live thing is gone: shown, and on approval only forgotten.
		if err := os.Remove(filepath.Join(p.dir, "live/web.json")); err != nil {
			t.Fatal(err)
		}
		r = p.mustRun(0, "deploy", "-e", "dev", "--refresh-only", "--yes")
		if !strings.Contains(r.stdout, "- app/web: gone") || !strings.Contains(r.stdout, "0 updated, 1 removed") {
			t.Errorf("a gone component should be shown and removed:\n%s", r)
		}
		if log := string(p.read("ran.log")); log != "" {
			t.Errorf("removing a gone component ran commands: %q", log)
		}
		if got := p.mustRun(0, "state", "list", "-e", "dev").stdout; got != "app/batch\n" {
			t.Errorf("state list after the refresh of a gone component: %q", got)
		}
		if h := p.history("dev").DeploymentHistory[0]; h.Type != "refresh" || !slices.Equal(h.Removed, []string{"app/web"}) {
			t.Errorf("the refresh's history record should name what it removed: %+v", h)
		}
	})
}

// TestRealPulumiRefreshOnly: through the real Pulumi CLI and the test
// provider, a refresh-only right after a deploy is No changes (no serial);
// a name changed outside Pulumi is shown as drift and, on --yes, recorded
// as a serial of type refresh with no create, update or delete by the
// provider; the next plan is No changes.
func TestRealPulumiRefreshOnly(t *testing.T) {
	pp := newPulumiProject(t)
	j := providerJournal(filepath.Join(pp.dir, "provider.journal"))
	t.Setenv("DEPLOYERTEST_JOURNAL", string(j))
	p := pp.stack("evolve", evolveYAML("db", "", 1, ""))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	serial := p.remoteState("dev").Serial
	ops := j.count(t, "start", "create") + j.count(t, "start", "update") + j.count(t, "start", "delete")

	if r := p.mustRun(0, "deploy", "-e", "dev", "--refresh-only", "--yes"); !strings.Contains(r.stdout, "No changes.") || strings.Contains(r.stdout, "Skipped") {
		t.Errorf("a refresh-only right after the deploy should read everything and say No changes:\n%s", r)
	}
	if got := p.remoteState("dev").Serial; got != serial {
		t.Errorf("a refresh-only with no drift wrote serial %d (was %d)", got, serial)
	}

	t.Setenv("DEPLOYERTEST_READ_NAME", "renamed-by-hand")
	r := p.mustRun(0, "deploy", "-e", "dev", "--refresh-only", "--yes")
	if !strings.Contains(r.stdout, "~ data/db") || !strings.Contains(r.stdout, "-> renamed-by-hand") || !strings.Contains(r.stdout, "2 updated, 0 removed") {
		t.Errorf("the refresh-only should show the name changed outside Pulumi and record it:\n%s", r)
	}
	if n := j.count(t, "start", "create") + j.count(t, "start", "update") + j.count(t, "start", "delete"); n != ops {
		t.Errorf("the refresh-only made the provider create, update or delete %d times", n-ops)
	}
	if h := p.history("dev").DeploymentHistory[0]; h.Type != "refresh" || h.Serial != serial+1 {
		t.Errorf("the refresh's history record: %+v (serial was %d)", h, serial)
	}
	if r := p.mustRun(0, "plan", "-e", "dev", "--refresh", "--detailed-exitcode"); !strings.Contains(r.stdout, "No drift") || !strings.Contains(r.stdout, "No changes.") {
		t.Errorf("after the refresh-only the plan should be No changes and the refresh find no drift:\n%s", r)
	}
}

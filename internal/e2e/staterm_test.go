//go:build unix

package e2e

// Forgetting and listing components, and state push's history record
// (docs/operations.md), on the file backends and on S3 state with DynamoDB
// locks.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// historyEntries is deployment_history of `state show --json`, as these tests read it.
type historyEntries struct {
	DeploymentHistory []struct {
		Type        string   `json:"type"`
		Status      string   `json:"status"`
		TriggeredBy string   `json:"triggered_by"`
		Removed     []string `json:"removed"`
		Serial      int64    `json:"serial"`
	} `json:"deployment_history"`
}

func (p *project) history(env string) historyEntries {
	p.t.Helper()
	var h historyEntries
	if err := json.Unmarshal([]byte(p.mustRun(0, "state", "show", "-e", env, "--json").stdout), &h); err != nil {
		p.t.Fatal(err)
	}
	return h
}

// TestStateRmForgetsWithoutDeleting: state list prints the addresses;
// state rm removes components without running their delete, as a new
// serial recorded as state-rm with who removed what; an unknown address
// removes nothing; state push records a state-push entry.
func TestStateRmForgetsWithoutDeleting(t *testing.T) {
	yaml := strings.Replace(protectYAML, "        protect: true\n", "", 1)
	projectOnBackends(t, yaml, func(t *testing.T, p *project, yaml string, env []string) {
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if got := p.mustRun(0, "state", "list", "-e", "dev").stdout; got != "app/api\napp/web\ndata/db\n" {
			t.Errorf("state list: %q", got)
		}
		serial := p.remoteState("dev").Serial
		p.write("ran.log", "")

		r := p.mustRun(1, "state", "rm", "-e", "dev", "--yes", "data/db", "nope/x")
		if !strings.Contains(r.stderr, "nope/x is not in the state") || p.remoteState("dev").Serial != serial {
			t.Errorf("an unknown address should be named and nothing removed:\n%s", r)
		}
		p.mustRun(2, "state", "rm", "-e", "dev", "--yes", "data")

		r = p.mustRun(0, "state", "rm", "-e", "dev", "--yes", "data/db", "app/web")
		if log := string(p.read("ran.log")); log != "" {
			t.Errorf("state rm ran commands: %q", log)
		}
		if got := p.mustRun(0, "state", "list", "-e", "dev").stdout; got != "app/api\n" {
			t.Errorf("state list after state rm: %q", got)
		}
		h := p.history("dev").DeploymentHistory[0]
		if h.Type != "state-rm" || h.Status != "success" || h.TriggeredBy == "" || !slices.Equal(h.Removed, []string{"app/web", "data/db"}) || h.Serial != serial+1 {
			t.Errorf("state rm's history record: %+v (serial was %d)", h, serial)
		}
		if out := p.mustRun(0, "history", "-e", "dev").stdout; !strings.Contains(out, "state-rm") || !strings.Contains(out, "forgot app/web, data/db") {
			t.Errorf("history should show the state-rm and what it forgot:\n%s", out)
		}

		// The next deploy creates what is still in deployer.yaml.
		p.mustRun(0, "deploy", "-e", "dev", "--yes")
		if log := string(p.read("ran.log")); !strings.Contains(log, "create-db") || !strings.Contains(log, "create-web") || strings.Contains(log, "delete") {
			t.Errorf("the deploy after state rm should create them again: %q", log)
		}

		// state push records who pushed. A file edited to the next serial
		// names no stored state it was written from: it needs --force.
		var doc map[string]any
		if err := json.Unmarshal([]byte(p.mustRun(0, "state", "show", "-e", "dev", "--json").stdout), &doc); err != nil {
			t.Fatal(err)
		}
		doc["serial"] = doc["serial"].(float64) + 1
		data, _ := json.Marshal(doc)
		p.write("next.json", string(data))
		p.mustRun(4, "state", "push", "next.json", "-e", "dev", "--yes")
		p.mustRun(0, "state", "push", "next.json", "-e", "dev", "--yes", "--force")
		h = p.history("dev").DeploymentHistory[0]
		if h.Type != "state-push-forced" || h.Status != "success" || h.TriggeredBy == "" {
			t.Errorf("state push's history record: %+v", h)
		}
	})
}

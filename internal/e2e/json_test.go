//go:build unix

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONModePrintsOnlyJSON(t *testing.T) {
	p := newShop(t)
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes", "--json")
	var out struct {
		Status       string `json:"status"`
		Serial       int64  `json:"serial"`
		DeploymentID string `json:"deployment_id"`
		Changed      bool   `json:"changed"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("deploy --json stdout is not one JSON document: %v\n%s", err, r)
	}
	if out.Status != "success" || out.Serial != 1 || !out.Changed || !strings.HasPrefix(out.DeploymentID, "dep-") {
		t.Errorf("deploy --json = %+v", out)
	}
	for _, args := range [][]string{{"history", "-e", "dev", "--json"}, {"state", "show", "-e", "dev", "--json"}, {"version", "--json"}} {
		r := p.mustRun(0, args...)
		if !json.Valid([]byte(r.stdout)) {
			t.Errorf("%v: stdout is not JSON:\n%s", args, r)
		}
	}
	r = p.run("deploy", "-e", "nope", "--yes", "--json")
	var e struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(r.stderr), &e); err != nil || r.stdout != "" || e.ExitCode != r.code || !strings.Contains(e.Error, "nope") {
		t.Errorf("an error in --json mode is one JSON object on stderr: %v\n%s", err, r)
	}
}

func TestInitWritesAStarterThatPlans(t *testing.T) {
	p := newProject(t, "")
	p.write("deployer.yaml", "") // replaced below
	r := p.run("init")
	if r.code == 0 || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("init over an existing file must refuse and name --force: %s", r)
	}
	p.mustRun(0, "init", "--force")
	p.mustRun(0, "plan", "-e", "dev")
}

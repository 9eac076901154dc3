package command

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

func TestApplyGivesStdinAndEnvironment(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	in.Outputs["db/main"] = map[string]any{"endpoint": "db.local", "port": "5432"}
	in.Outputs["web/site"] = map[string]any{"url": "http://old"}
	in.EnvConfig = map[string]any{"aws:region": "us-east-1"}
	cfg := map[string]any{
		"title":    "Users API",
		"password": map[string]any{"secret": true, "value": "hunter2"},
		"scaling":  map[string]any{"min-replicas": 2},
		"ports":    []any{80, 443},
	}
	st := step("web/site", plan.Update, Spec{
		Update: `cat > stdin.json; env | grep '^DEPLOYER_' | grep -v '^DEPLOYER_OUTPUTS=' | sort > env.txt; test -f "$DEPLOYER_OUTPUTS"`,
	}, cfg, "db/main")

	if _, err := apply(testEngine(), context.Background(), []plan.Step{st}, in); err != nil {
		t.Fatalf("Apply: %v", err)
	}

	var got map[string]any
	if err := json.Unmarshal([]byte(readFile(t, join(in.Dir, "stdin.json"))), &got); err != nil {
		t.Fatalf("stdin is not JSON: %v", err)
	}
	want := map[string]any{
		"stack": "quickstart", "environment": "dev", "component": "web/site", "action": "update",
		"deployment_id":      "dep-test",
		"config":             map[string]any{"title": "Users API", "password": "hunter2", "scaling": map[string]any{"min-replicas": 2.0}, "ports": []any{80.0, 443.0}},
		"environment_config": map[string]any{"aws:region": "us-east-1"},
		"outputs":            map[string]any{"url": "http://old"},
		"dependencies":       map[string]any{"db/main": map[string]any{"endpoint": "db.local", "port": "5432"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stdin JSON (-want +got):\n%s", d)
	}

	env := strings.Split(strings.TrimSpace(readFile(t, join(in.Dir, "env.txt"))), "\n")
	wantEnv := []string{
		"DEPLOYER_ACTION=update",
		"DEPLOYER_COMPONENT=web/site",
		"DEPLOYER_CONFIG_PASSWORD=hunter2",
		`DEPLOYER_CONFIG_PORTS=[80,443]`,
		"DEPLOYER_CONFIG_PORTS_0=80",
		"DEPLOYER_CONFIG_PORTS_1=443",
		`DEPLOYER_CONFIG_SCALING={"min-replicas":2}`,
		"DEPLOYER_CONFIG_SCALING_MIN_REPLICAS=2",
		"DEPLOYER_CONFIG_TITLE=Users API",
		"DEPLOYER_DEPLOYMENT_ID=dep-test",
		"DEPLOYER_DEP_DB_MAIN_ENDPOINT=db.local",
		"DEPLOYER_DEP_DB_MAIN_PORT=5432",
		"DEPLOYER_ENVIRONMENT=dev",
		"DEPLOYER_ENV_CONFIG_AWS_REGION=us-east-1",
		"DEPLOYER_OUTPUT_URL=http://old",
		"DEPLOYER_STACK=quickstart",
	}
	if d := cmp.Diff(wantEnv, env); d != "" {
		t.Errorf("DEPLOYER_* environment (-want +got):\n%s", d)
	}
}

func TestOutputsFlowToDependent(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	steps := []plan.Step{
		step("config/render", plan.Create, Spec{
			Create: `printf '{"path":"out/app.conf","lines":3}' > "$DEPLOYER_OUTPUTS"`,
		}, nil),
		step("app/build", plan.Create, Spec{
			Create: `printf '{"seen":"%s","n":"%s"}' "$DEPLOYER_DEP_CONFIG_RENDER_PATH" "$DEPLOYER_DEP_CONFIG_RENDER_LINES" > "$DEPLOYER_OUTPUTS"`,
		}, nil, "config/render"),
	}
	results, err := apply(testEngine(), context.Background(), steps, in)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if len(results) != 2 {
		t.Fatalf("got %d results, want 2", len(results))
	}
	want := map[string]any{"seen": "out/app.conf", "n": "3"}
	if d := cmp.Diff(want, results[1].Outputs); d != "" {
		t.Errorf("dependent outputs (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, in.Outputs["app/build"]); d != "" {
		t.Errorf("in.Outputs not updated for later engines (-want +got):\n%s", d)
	}
	for _, r := range results {
		if r.Status != engine.StatusReady || r.ActualState["exit_code"] != 0 {
			t.Errorf("%s: status %q actual_state %v, want ready with exit_code 0", r.Address, r.Status, r.ActualState)
		}
	}
}

func TestFailureStopsDependents(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	steps := []plan.Step{
		step("a/first", plan.Create, Spec{Create: `echo '{"ok":true}' > "$DEPLOYER_OUTPUTS"`}, nil),
		step("a/broken", plan.Create, Spec{Create: `echo 'disk full' >&2; exit 3`}, nil, "a/first"),
		step("b/after", plan.Create, Spec{Create: `touch ran`}, nil, "a/broken"),
	}
	results, err := apply(testEngine(), context.Background(), steps, in)
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("Apply error = %v, want *StepError", err)
	}
	for _, s := range []string{"a/broken", `"echo 'disk full' >&2; exit 3"`, "exited with code 3", "disk full"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
	if len(results) != 2 {
		t.Fatalf("got %d results, want 2 (the dependent must not start)", len(results))
	}
	if results[0].Status != engine.StatusReady || results[1].Status != engine.StatusFailed {
		t.Errorf("statuses = %q, %q; want ready, failed", results[0].Status, results[1].Status)
	}
	if results[1].ActualState["exit_code"] != 3 {
		t.Errorf("failed step actual_state = %v, want exit_code 3", results[1].ActualState)
	}
	if exists(join(in.Dir, "ran")) {
		t.Error("the dependent step ran after its dependency failed")
	}
	if _, ok := in.Outputs["a/broken"]; ok {
		t.Error("a failed step's outputs were recorded")
	}
}

func TestInvalidOutputsFailTheStep(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	for _, tc := range []struct{ name, write, want string }{
		{"not json", `echo 'url=http://x'`, "url=http://x"},
		{"array", `echo '[1,2]'`, "JSON array, not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := step("web/site", plan.Create, Spec{Create: tc.write + ` > "$DEPLOYER_OUTPUTS"`}, nil)
			results, err := apply(testEngine(), context.Background(), []plan.Step{st}, in)
			if err == nil || !strings.Contains(err.Error(), "DEPLOYER_OUTPUTS") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Apply error = %v, want one naming $DEPLOYER_OUTPUTS and %q", err, tc.want)
			}
			if results[0].Status != engine.StatusFailed {
				t.Errorf("status = %q, want failed", results[0].Status)
			}
		})
	}
}

func TestActionsRunTheRightCommands(t *testing.T) {
	spec := Spec{
		Create: `echo "create $DEPLOYER_ACTION" >> log; echo '{"v":"new"}' > "$DEPLOYER_OUTPUTS"`,
		Delete: `echo "delete $DEPLOYER_ACTION $DEPLOYER_OUTPUT_V" >> log`,
	}
	prior := &statestore.Resource{Outputs: map[string]any{"v": "old"}}
	tests := []struct {
		name    string
		action  plan.Action
		spec    Spec
		destroy bool
		log     string
		status  engine.Status
		outputs map[string]any // in.Outputs entry after the step; nil = removed
	}{
		{"update falls back to create", plan.Update, spec, false, "create update\n", engine.StatusReady, map[string]any{"v": "new"}},
		{"replace deletes then creates", plan.Replace, spec, false, "delete delete old\ncreate create\n", engine.StatusReady, map[string]any{"v": "new"}},
		{"delete", plan.Delete, spec, false, "delete delete old\n", engine.StatusDeleted, nil},
		{"destroy deletes", plan.Update, spec, true, "delete delete old\n", engine.StatusDeleted, nil},
		{"delete without command", plan.Delete, Spec{Create: spec.Create}, false, "", engine.StatusDeleted, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := inputs(t, &syncBuffer{})
			in.Outputs["web/site"] = map[string]any{"v": "old"}
			st := step("web/site", tc.action, tc.spec, nil)
			st.Prior = prior
			if tc.action == plan.Replace {
				st.PriorSettings = st.Settings // applied with the same commands
			}
			call := apply
			if tc.destroy {
				call = destroy
			}
			results, err := call(testEngine(), context.Background(), []plan.Step{st}, in)
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			log := ""
			if exists(join(in.Dir, "log")) {
				log = readFile(t, join(in.Dir, "log"))
			}
			if log != tc.log {
				t.Errorf("commands run:\n%q\nwant:\n%q", log, tc.log)
			}
			if results[0].Status != tc.status {
				t.Errorf("status = %q, want %q", results[0].Status, tc.status)
			}
			if d := cmp.Diff(tc.outputs, in.Outputs["web/site"]); d != "" {
				t.Errorf("in.Outputs[web/site] (-want +got):\n%s", d)
			}
		})
	}
}

func TestNoOpStepsAreSkipped(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	st := step("web/site", plan.NoOp, Spec{Create: "touch ran"}, nil)
	results, err := apply(testEngine(), context.Background(), []plan.Step{st}, in)
	if err != nil || len(results) != 0 || exists(join(in.Dir, "ran")) {
		t.Errorf("no-op step: results %v, err %v, ran %v; want nothing run", results, err, exists(join(in.Dir, "ran")))
	}
}

func TestMissingCreateCommandSaysWhatToSet(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	st := step("web/site", plan.Create, Spec{}, nil)
	_, err := apply(testEngine(), context.Background(), []plan.Step{st}, in)
	if err == nil || !strings.Contains(err.Error(), "services.web.components.site.command.create") {
		t.Errorf("error = %v, want one naming services.web.components.site.command.create", err)
	}
}

package command

import (
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/google/go-cmp/cmp"
)

// buildPlan plans comps (address -> commands) against resources with the
// Command kind's settings rules, as deploy does.
func buildPlan(t *testing.T, comps map[string]map[string]any, resources map[string]*statestore.Resource) map[string]plan.Step {
	t.Helper()
	r := &config.Resolved{Stack: "shop", Env: "prod", Components: map[string]*config.ResolvedComponent{}}
	for addr, cmds := range comps {
		svc, name, _ := strings.Cut(addr, "/")
		r.Components[addr] = &config.ResolvedComponent{Address: addr, Service: svc, Name: name, Kind: Kind, Config: map[string]any{},
			Settings: map[string]map[string]any{Section: cmds}}
	}
	kind := New().Kinds()[0]
	p, err := plan.Build(r, &statestore.State{Serial: 1, Resources: resources}, plan.Options{
		Now:       func() time.Time { return time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC) },
		Settings:  func(string) plan.KindSettings { return kind.Settings },
		ReplaceOn: func(string) []string { return kind.ReplaceOn },
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]plan.Step{}
	for _, s := range p.Steps {
		got[s.Address] = s
	}
	return got
}

func recordedResource(actual map[string]any) *statestore.Resource {
	return &statestore.Resource{Kind: Kind, Status: statestore.ResourceReady, DesiredConfig: map[string]any{}, ActualState: actual}
}

// Commands are desired config: a create lists them, a changed command is an
// update with a command.* diff, a legacy state without recorded commands
// plans no command diff, and a delete says what it runs.
func TestCommandsAreDiffedAndDeletesSayWhatRuns(t *testing.T) {
	recorded := func(cmds map[string]any) *statestore.Resource {
		return recordedResource(map[string]any{"command": "./create.sh", CommandsKey: cmds})
	}
	oldLegacy := recordedResource(map[string]any{"delete_command": "./old-delete.sh"})
	both := map[string]any{"create": "./create.sh", "delete": "./delete.sh"}
	site := map[string]any{"create": "./create.sh", "update": "./update.sh v1", "delete": "./delete.sh"}
	resources := map[string]*statestore.Resource{
		"web/site":   recorded(site),
		"web/legacy": oldLegacy,
		"web/gone":   recorded(map[string]any{"create": "./x", "delete": "rm -rf out/gone"}),
		"web/quiet":  recorded(map[string]any{"create": "./x"}),
	}
	got := buildPlan(t, map[string]map[string]any{
		"web/new":    both,
		"web/site":   {"create": "./create.sh", "update": "./update.sh v2", "delete": "./delete.sh"},
		"web/legacy": both,
	}, resources)
	want := map[string][]plan.FieldDiff{
		"web/new":  {{Path: "command.create", New: "./create.sh", Op: plan.OpAdd}, {Path: "command.delete", New: "./delete.sh", Op: plan.OpAdd}},
		"web/site": {{Path: "command.update", Old: "./update.sh v1", New: "./update.sh v2", Op: plan.OpChange}},
	}
	for addr, diffs := range want {
		if diff := cmp.Diff(diffs, got[addr].Diffs); diff != "" {
			t.Errorf("%s diffs (-want +got):\n%s", addr, diff)
		}
	}
	if got["web/site"].Action != plan.Update || stateOnly(got["web/site"]) {
		t.Errorf("web/site: %s (state only %v), want an update that runs", got["web/site"].Action, stateOnly(got["web/site"]))
	}
	if got["web/legacy"].Action != plan.NoOp {
		t.Errorf("web/legacy (no recorded commands): %s %v, want no-op", got["web/legacy"].Action, got["web/legacy"].Diffs)
	}
	if r := got["web/gone"].Runs; got["web/gone"].Action != plan.Delete || r == nil || *r != "rm -rf out/gone" {
		t.Errorf("web/gone: %s runs %v, want a delete that runs rm -rf out/gone", got["web/gone"].Action, r)
	}
	if r := got["web/quiet"].Runs; r == nil || *r != "" {
		t.Errorf("web/quiet (no delete command): runs %v, want \"\"", r)
	}

	// Only the delete command changed: an update that records it and runs nothing.
	got = buildPlan(t, map[string]map[string]any{"web/site": {"create": "./create.sh", "update": "./update.sh v1", "delete": "./delete.sh --force"}},
		map[string]*statestore.Resource{"web/site": resources["web/site"]})
	if s := got["web/site"]; s.Action != plan.Update || !stateOnly(s) || len(s.Diffs) != 1 || s.Diffs[0].Path != "command.delete" {
		t.Errorf("delete-only change: %s %+v (state only %v), want a state-only update of command.delete", s.Action, s.Diffs, stateOnly(s))
	}
	// A legacy delete command in state is what a removed component's delete runs.
	got = buildPlan(t, nil, map[string]*statestore.Resource{"web/legacy": oldLegacy})
	if s := got["web/legacy"]; s.Runs == nil || *s.Runs != "./old-delete.sh" || stepSpec(s).Delete != "./old-delete.sh" {
		t.Errorf("legacy delete: runs %v, want ./old-delete.sh", s.Runs)
	}
}

// An apply records the commands it ran with in actual_state.commands (the
// legacy delete_command key goes), so the next plan diffs them and a delete
// after the component left deployer.yaml runs the recorded one.
func TestApplyRecordsItsCommands(t *testing.T) {
	st := step("web/site", plan.Update, Spec{Create: "true", Delete: "rm -f x", Timeout: time.Minute}, nil)
	st.Prior = recordedResource(map[string]any{legacyDeleteKey: "./old.sh", "exit_code": 0})
	st.Diffs = []plan.FieldDiff{{Path: "version", Old: "1", New: "2", Op: plan.OpChange}}
	res, err := apply(testEngine(), t.Context(), []plan.Step{st}, inputs(t, &syncBuffer{}))
	if err != nil {
		t.Fatal(err)
	}
	got := res[0].ActualState
	if _, legacy := got[legacyDeleteKey]; legacy || !cmp.Equal(got[CommandsKey], map[string]any{"create": "true", "delete": "rm -f x", "timeout": "1m0s"}) {
		t.Errorf("actual_state = %v, want the commands recorded and no delete_command", got)
	}
	again := buildPlan(t, nil, map[string]*statestore.Resource{"web/site": recordedResource(got)})
	if r := again["web/site"].Runs; r == nil || *r != "rm -f x" {
		t.Errorf("delete after removal runs %v, want the recorded rm -f x", r)
	}
}

// A replace deletes the existing instance with the delete it was applied
// with and creates the new one with the configured create; the plan says which delete runs. A legacy state (no recorded
// commands) has nothing to diff the triggers with: it is not replaced.
func TestReplaceRunsTheRecordedDelete(t *testing.T) {
	oldCmds := map[string]any{"create": "echo create-v1 >> log", "delete": "echo delete-v1 $DEPLOYER_OUTPUT_V >> log", "timeout": "1m0s", "triggers": []any{"1"}}
	newCmds := map[string]any{"create": `echo create-v2 >> log; echo '{"v":"2"}' > "$DEPLOYER_OUTPUTS"`, "delete": "echo delete-v2 >> log", "triggers": []any{"2"}}
	for _, tc := range []struct {
		name   string
		actual map[string]any
		runs   string
		log    string
	}{
		{"recorded commands", map[string]any{CommandsKey: oldCmds}, "echo delete-v1 $DEPLOYER_OUTPUT_V >> log", "delete-v1 1\ncreate-v2\n"},
		{"recorded without delete", map[string]any{CommandsKey: map[string]any{"create": "true", "triggers": []any{"1"}}}, "", "create-v2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prior := recordedResource(tc.actual)
			prior.Outputs = map[string]any{"v": "1"}
			st := buildPlan(t, map[string]map[string]any{"web/site": newCmds}, map[string]*statestore.Resource{"web/site": prior})["web/site"]
			if st.Action != plan.Replace || st.Runs == nil || *st.Runs != tc.runs {
				t.Fatalf("plan: %s %+v runs %v, want a replace whose delete runs %q", st.Action, st.Diffs, st.Runs, tc.runs)
			}
			in := inputs(t, &syncBuffer{})
			res, err := apply(testEngine(), t.Context(), []plan.Step{st}, in)
			if err != nil {
				t.Fatal(err)
			}
			if log := readFile(t, join(in.Dir, "log")); log != tc.log {
				t.Errorf("commands run:\n%q\nwant:\n%q", log, tc.log)
			}
			if got := res[0].ActualState[CommandsKey]; !cmp.Equal(got, newCmds) {
				t.Errorf("recorded commands %v, want the configured ones %v", got, newCmds)
			}
		})
	}
	legacy := recordedResource(map[string]any{legacyDeleteKey: "echo delete-legacy >> log"})
	if st := buildPlan(t, map[string]map[string]any{"web/site": newCmds}, map[string]*statestore.Resource{"web/site": legacy})["web/site"]; st.Action != plan.NoOp {
		t.Errorf("legacy state: %s %+v, want no-op until an apply records the commands", st.Action, st.Diffs)
	}
}

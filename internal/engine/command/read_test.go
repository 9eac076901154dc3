package command

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// A create records read's JSON in actual_state.live; a read that does not
// print one JSON object fails the step with an error naming the component
// and saying what to print.
func TestApplyRecordsWhatReadPrints(t *testing.T) {
	for _, tc := range []struct {
		name, read, wantErr string
	}{
		{"object", `echo '{"replicas": 2}'`, ""},
		{"array", `echo '[1, 2]'`, "component web/site: read command \"echo '[1, 2]'\" printed a JSON array, not an object"},
		{"two values", `echo '{} {}'`, "printed invalid JSON (more than one JSON value)"},
		{"nothing", `true`, "printed nothing right after the create: print one JSON object of the live state, or null when the thing is gone"},
		{"null", `echo null`, "printed null right after the create: the thing is gone, so the state drops the component and the next deploy creates it"},
		{"fails", `echo down >&2; exit 4`, "read command \"echo down >&2; exit 4\" exited with code 4; last stderr lines:\n  down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := inputs(t, &syncBuffer{})
			st := step("web/site", plan.Create, Spec{Create: "true", Read: tc.read}, nil)
			res, err := apply(testEngine(), context.Background(), []plan.Step{st}, in)
			if tc.wantErr == "" {
				live, _ := res[0].ActualState[LiveKey].(map[string]any)
				if err != nil || res[0].Status != engine.StatusReady || live["replicas"] == nil {
					t.Fatalf("Apply = %v, %+v; want ready with actual_state.live", err, res)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || res[0].Status != engine.StatusFailed {
				t.Fatalf("Apply = %v (status %s), want a failed step saying %q", err, res[0].Status, tc.wantErr)
			}
			if res[0].Gone != (tc.name == "null") {
				t.Fatalf("Apply: Gone = %v, want it only for a read that printed null", res[0].Gone)
			}
		})
	}
}

// Refresh reads only components with a read command and state; with none
// it is not supported (deploy says what to add).
func TestRefreshReadsOnlyComponentsWithReadAndState(t *testing.T) {
	in := inputs(t, &syncBuffer{})
	prior := &statestore.Resource{ActualState: map[string]any{LiveKey: map[string]any{"n": 1}}}
	noRead := step("a/no-read", plan.NoOp, Spec{Create: "true"}, nil)
	noRead.Prior = prior
	noState := step("a/no-state", plan.Create, Spec{Create: "true", Read: "exit 9"}, nil)
	if _, err := refresh(testEngine(), context.Background(), []plan.Step{noRead, noState}, in); !errors.Is(err, engine.ErrNotSupported) {
		t.Fatalf("Refresh without read commands = %v, want ErrNotSupported", err)
	}
	same := step("a/same", plan.NoOp, Spec{Create: "true", Read: `echo '{"n": 1.0}'`}, nil)
	same.Prior = prior
	drift, err := refresh(testEngine(), context.Background(), []plan.Step{noRead, same}, in)
	if err != nil || len(drift) != 0 {
		t.Fatalf("Refresh = %v, %+v; want no drift (1 and 1.0 are the same number)", err, drift)
	}
}

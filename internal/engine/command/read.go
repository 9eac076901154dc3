package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// LiveKey is the actual_state key under which an apply records what the
// component's read command printed (docs/command-kind.md#drift-read).
const LiveKey = "live"

// readLive runs the read command of st (command.read) with config and
// outputs as the component's own and returns the JSON object it printed on
// stdout. gone is true when it printed nothing or null: the live thing no
// longer exists. A failed command, or output that is not one JSON object,
// is an error naming the component.
func (e *Engine) readLive(ctx context.Context, st plan.Step, in engine.Inputs, config, outputs map[string]any) (live map[string]any, gone bool, err error) {
	p := payload{
		Stack: in.Stack, Environment: in.Env, Component: st.Address, Action: "read",
		DeploymentID: in.DeploymentID,
		Config:       unwrapMap(config),
		EnvConfig:    unwrapMap(in.EnvConfig),
		Outputs:      unwrapMap(outputs),
		Dependencies: dependencyOutputs(st, in),
	}
	timeout := e.timeout
	spec := stepSpec(st)
	if spec.Timeout > 0 {
		timeout = spec.Timeout
	}
	out, err := e.run(ctx, runSpec{
		address: st.Address, action: "read", command: spec.Read, dir: in.Dir,
		payload: p, timeout: timeout, progress: progress(in), captureStdout: true,
	})
	if err != nil {
		return nil, false, err
	}
	b := bytes.TrimSpace(out.stdout)
	if len(b) == 0 || string(b) == "null" {
		return nil, true, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		if err == nil {
			err = fmt.Errorf("more than one JSON value")
		}
		return nil, false, &StepError{Address: st.Address, Action: "read", Command: spec.Read, ExitCode: 0,
			Reason: fmt.Sprintf("printed invalid JSON (%v): print one JSON object of the live state, such as {\"replicas\":3} (stdout held %d bytes)", err, len(b))}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, &StepError{Address: st.Address, Action: "read", Command: spec.Read, ExitCode: 0,
			Reason: fmt.Sprintf("printed a JSON %s, not an object: print one JSON object of the live state, such as {\"replicas\":3}, or nothing when it is gone", jsonType(v))}
	}
	if in.Learn != nil {
		in.Learn(st.Address, m) // its secrets are masked from here on, like outputs
	}
	return m, false, nil
}

// recordLive runs the read command after a successful create, update or
// replace of st and records its JSON in actual[LiveKey]. A read that fails,
// or finds nothing right after the apply, fails the step.
func (e *Engine) recordLive(ctx context.Context, st plan.Step, in engine.Inputs, outputs, actual map[string]any) error {
	live, gone, err := e.readLive(ctx, st, in, st.Config, outputs)
	if err != nil {
		return err
	}
	if gone {
		return &StepError{Address: st.Address, Action: "read", Command: stepSpec(st).Read, ExitCode: 0,
			Reason: "printed nothing right after the " + string(st.Action) + ": print one JSON object of the live state"}
	}
	actual[LiveKey] = live
	return nil
}

// Refresh runs (refresh) the read command of every component of req.Steps
// that has one
// and state (Prior), and returns those whose live state differs from what
// their last apply recorded (actual_state.live), with field diffs relative
// to the read JSON; a component whose read printed nothing is Missing. A
// failing read stops the refresh with an error naming the component.
// engine.ErrNotSupported when no component of steps has a read command.
func (e *Engine) Refresh(ctx context.Context, req engine.RefreshRequest) (engine.RefreshResponse, error) {
	var out []engine.Drift
	seen := map[string]bool{}
	for _, st := range req.Steps {
		if st.Prior == nil || stepSpec(st).Read == "" || seen[st.Address] {
			continue
		}
		seen[st.Address] = true
		live, gone, err := e.readLive(ctx, st, req.Inputs, st.Prior.DesiredConfig, st.Prior.Outputs)
		if err != nil {
			return engine.RefreshResponse{}, fmt.Errorf("refresh: %w", err)
		}
		if gone {
			out = append(out, engine.Drift{Address: st.Address, Missing: true})
			continue
		}
		recorded, _ := st.Prior.ActualState[LiveKey].(map[string]any)
		fields := plan.FieldDiffs(recorded, live)
		if len(fields) == 0 {
			continue
		}
		actual := maps.Clone(st.Prior.ActualState)
		if actual == nil {
			actual = map[string]any{}
		}
		actual[LiveKey] = live
		out = append(out, engine.Drift{Address: st.Address, Fields: fields, ActualState: actual})
	}
	if len(seen) == 0 {
		return engine.RefreshResponse{}, engine.ErrNotSupported
	}
	return engine.RefreshResponse{Drift: out}, nil
}

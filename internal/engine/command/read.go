package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// LiveKey is the actual_state key under which an apply records what the
// component's read command printed (docs/command-kind.md#drift-read).
const LiveKey = "live"

// readLive runs the read command of st (command.read) with config and
// outputs as the component's own and returns the JSON object it printed on
// stdout. gone is true when it printed null (or nothing; empty says which):
// the live thing no longer exists. A failed command, or output that is not
// one JSON object, is an error naming the component.
func (e *Engine) readLive(ctx context.Context, st plan.Step, in engine.Inputs, config, outputs map[string]any) (live map[string]any, gone, empty bool, err error) {
	return e.read(ctx, st, in, readPayload(st, in, "read", config, outputs))
}

// readPayload is the stdin of st's read command run for action ("read",
// "import") with config and outputs as the component's own.
func readPayload(st plan.Step, in engine.Inputs, action string, config, outputs map[string]any) payload {
	return payload{
		Stack: in.Stack, Environment: in.Env, Component: st.Address, Action: action,
		DeploymentID: in.DeploymentID,
		Config:       unwrapMap(config),
		EnvConfig:    unwrapMap(in.EnvConfig),
		Outputs:      unwrapMap(outputs),
		Dependencies: dependencyOutputs(st, in),
	}
}

// read runs st's read command with stdin p, as readLive says.
func (e *Engine) read(ctx context.Context, st plan.Step, in engine.Inputs, p payload) (live map[string]any, gone, empty bool, err error) {
	timeout := e.timeout
	spec := stepSpec(st)
	if spec.Timeout > 0 {
		timeout = spec.Timeout
	}
	out, err := e.run(ctx, runSpec{
		address: st.Address, action: p.Action, command: spec.Read, dir: in.Dir,
		payload: p, timeout: timeout, grace: spec.Grace, progress: progress(in), captureStdout: true,
	})
	if err != nil {
		return nil, false, false, err
	}
	done := func() {
		fmt.Fprintf(progress(in), "[%s] %s done in %s\n", st.Address, p.Action, out.duration.Round(time.Millisecond))
	}
	b := bytes.TrimSpace(out.stdout)
	if len(b) == 0 || string(b) == "null" {
		if p.Action != "import" { // an import that finds nothing fails (importStep)
			done()
		}
		return nil, true, len(b) == 0, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		if err == nil {
			err = fmt.Errorf("more than one JSON value")
		}
		return nil, false, false, &StepError{Address: st.Address, Action: p.Action, Command: spec.Read, ExitCode: 0,
			Reason: fmt.Sprintf("printed invalid JSON (%v): print one JSON object of the live state, such as {\"replicas\":3} (stdout held %d bytes)", err, len(b))}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, false, &StepError{Address: st.Address, Action: p.Action, Command: spec.Read, ExitCode: 0,
			Reason: fmt.Sprintf("printed a JSON %s, not an object: print one JSON object of the live state, such as {\"replicas\":3}, or null when it is gone", jsonType(v))}
	}
	if in.Learn != nil {
		in.Learn(st.Address, m) // its secrets are masked from here on, like outputs
	}
	done()
	return m, false, false, nil
}

// ErrGone is wrapped by the error of a step whose read printed null right
// after its create, update or replace: the thing is gone
// (docs/command-kind.md#drift-read). The step fails and its Result says
// Gone, so the state drops its entry and the next plan creates it, rather
// than retrying an update of something that is not there.
var ErrGone = errors.New("the live thing is gone")

// recordLive runs the read command after a successful create, update or
// replace of st and records its JSON in actual[LiveKey]. A read that fails
// fails the step; one that prints null fails it wrapping ErrGone; one that
// prints nothing fails it saying what to print (an empty output right
// after an apply is more likely a read that is wrong than a thing gone).
func (e *Engine) recordLive(ctx context.Context, st plan.Step, in engine.Inputs, outputs, actual map[string]any) error {
	live, gone, empty, err := e.readLive(ctx, st, in, st.Config, outputs)
	if err != nil {
		return err
	}
	switch {
	case empty:
		return &StepError{Address: st.Address, Action: "read", Command: stepSpec(st).Read, ExitCode: 0,
			Reason: "printed nothing right after the " + string(st.Action) + ": print one JSON object of the live state, " +
				"or null when the thing is gone, fix command.read and deploy again (docs/command-kind.md#drift-read)"}
	case gone:
		return &StepError{Address: st.Address, Action: "read", Command: stepSpec(st).Read, ExitCode: 0, Err: ErrGone,
			Reason: "printed null right after the " + string(st.Action) + ": the thing is gone, so the state drops the " +
				"component and the next deploy creates it (docs/command-kind.md#drift-read)"}
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
	var read []string
	seen := map[string]bool{}
	for _, st := range req.Steps {
		if st.Prior == nil || stepSpec(st).Read == "" || seen[st.Address] {
			continue
		}
		seen[st.Address] = true
		read = append(read, st.Address)
		live, gone, _, err := e.readLive(ctx, st, req.Inputs, st.Prior.DesiredConfig, st.Prior.Outputs)
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
	return engine.RefreshResponse{Drift: out, Read: read}, nil
}

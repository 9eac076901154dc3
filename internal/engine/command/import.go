package command

import (
	"context"
	"fmt"
	"maps"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// importStep adopts the existing instance of an Import step
// (docs/operations.md#import): it runs command.read, action "import",
// with the id in DEPLOYER_IMPORT_ID, and records the JSON object it
// prints as the component's outputs and as actual_state.live. create
// never runs. A read that prints null or nothing found no such instance:
// the step fails and nothing is recorded.
func (e *Engine) importStep(ctx context.Context, st plan.Step, in engine.Inputs, res engine.Result) (engine.Result, error) {
	spec := stepSpec(st)
	p := readPayload(st, in, "import", st.Config, nil)
	p.ImportID = st.ImportID
	live, gone, _, err := e.read(ctx, st, in, p)
	if err == nil && gone {
		err = &StepError{Address: st.Address, Action: "import", Command: spec.Read, ExitCode: 0,
			Reason: fmt.Sprintf("printed null or nothing for DEPLOYER_IMPORT_ID=%s: no such instance to import "+
				"(check the id, or print one JSON object of the instance it names)", st.ImportID)}
	}
	res.Finished = e.now()
	if err != nil {
		return failed(res, err), err
	}
	res.Status = engine.StatusReady
	res.Outputs = live
	res.ActualState = recordCommands(map[string]any{LiveKey: maps.Clone(live)}, st)
	in.Outputs[st.Address] = maps.Clone(live)
	return res, nil
}

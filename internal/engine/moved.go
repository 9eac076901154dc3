package engine

import (
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/deployer-dev/deployer/internal/plan"
)

// Moved is the result of a step that only moves its component
// (plan.Step.MovedFrom on a no-op, docs/operations.md#moves) for an
// engine that keeps nothing under the address: nothing runs, the
// component is ready with the outputs it had, which are put in outputs
// (Inputs.Outputs; may be nil) for later steps. It says so on progress.
func Moved(st plan.Step, outputs map[string]map[string]any, progress io.Writer, now time.Time) Result {
	var prior map[string]any
	if st.Prior != nil {
		prior = maps.Clone(st.Prior.Outputs)
	}
	if outputs != nil {
		outputs[st.Address] = maps.Clone(prior)
	}
	if progress != nil {
		fmt.Fprintf(progress, "[%s] moved from %s: nothing runs\n", st.Address, st.MovedFrom)
	}
	return Result{Address: st.Address, Action: plan.NoOp, Status: StatusReady, Outputs: prior, Started: now, Finished: now}
}

package ghactions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// RunWait writes to the job summary how a deploy --run-id waited for the
// upstream stacks of its run, one line each (docs/many-stacks.md#one-job-per-stack-the-matrix),
// and, when it was skipped, a warning annotation that says why.
func (r *Reporter) RunWait(t deploy.Target, runID string, waits []deploy.UpstreamWait, err error) {
	var skipped *deploy.SkippedError
	isSkipped := errors.As(err, &skipped)
	if len(waits) == 0 && !isSkipped {
		return
	}
	r.Summarize(runWaitSummary(r.esc(), r.Command(), t, runID, waits, skipped))
	if isSkipped && r.Env().Actions {
		r.annotate(Warning, fmt.Sprintf("Skipped %s/%s", t.Stack, t.Env), skipped.Error())
	}
}

func runWaitSummary(esc sanitize.Masked, command string, t deploy.Target, runID string, waits []deploy.UpstreamWait, skipped *deploy.SkippedError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s/%s, run `%s`\n\n", orDefault(command, "deployer deploy"), t.Stack, t.Env, esc.CodeSpan(runID))
	if len(waits) > 0 {
		b.WriteString("| Upstream | Result | Deployment | Waited | Reads |\n|---|---|---|---|---|\n")
		for _, w := range waits {
			status, dep := "waiting", "–"
			if w.Status != "" {
				status = string(w.Status)
				dep = fmt.Sprintf("`%s` (attempt %d)", esc.CodeSpan(w.DeploymentID), w.Attempt)
			}
			if w.Reads == 0 {
				status = "not read"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %.1fs | %d |\n", esc.CodeSpan(w.Stack), status, dep, w.Waited.Seconds(), w.Reads)
		}
		b.WriteString("\n")
	}
	if skipped != nil {
		fmt.Fprintf(&b, "**Result:** %s. Nothing was deployed.\n\n", esc.Markdown(skipped.Error()))
	}
	return b.String()
}

package planview

import (
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// NoChangesButDrift is plan --refresh's last line when deployer.yaml has no
// change to apply but what is live drifted from the state (docs/plan.md#drift).
const NoChangesButDrift = "No changes to apply: deployer.yaml matches the state, but what is live does not (the drift above).\n" +
	"A deploy with no changes runs nothing and leaves the drift as it is."

// ChangesCell is a stack's changes in a many-stacks table: "+1 ~2 -0"
// (applied), "+1 ~2 ±0 -0" (planned), or "".
func ChangesCell(r runner.StackResult) string {
	if r.Outcome != nil && r.Outcome.Deployment.DeploymentID != "" {
		c := r.Outcome.Deployment.ResourcesChanged
		return fmt.Sprintf("+%d ~%d -%d", c.Created, c.Updated, c.Deleted)
	}
	if r.Plan != nil && r.Plan.HasChanges() && r.Status != runner.StackFailed {
		s := r.Plan.Summary
		return fmt.Sprintf("+%d ~%d ±%d -%d", s.Create, s.Update, s.Replace, s.Delete)
	}
	return ""
}

// NoteCell says why a stack was skipped or failed (masked, not escaped:
// the caller escapes it for its view), or that its plan read producers
// with changes of their own.
func NoteCell(r runner.StackResult, esc sanitize.Masked) string {
	switch {
	case r.Reason != "":
		return esc.Raw(r.Reason)
	case len(r.Stale) > 0:
		return fmt.Sprintf("reads %s (changes pending upstream: deploy --all plans this again after them)", strings.Join(r.Stale, ", "))
	}
	return ""
}

// AnyChanges reports whether the plan of any stack has changes.
func AnyChanges(results []runner.StackResult) bool {
	for _, r := range results {
		if r.Plan != nil && r.Plan.HasChanges() {
			return true
		}
	}
	return false
}

// OneLine is a component's failure on one line ("failed" without an
// error), as --json and the job summary show it.
func OneLine(err error) string {
	if err == nil {
		return "failed"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

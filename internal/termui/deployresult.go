package termui

// The result of deploy and destroy: the --json document and the summary
// printed after the plan (docs/commands.md#deployer-deploy).

import (
	"cmp"
	"errors"
	"fmt"
	"io"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/statestore"
)

type deployJSON struct {
	Stack        string     `json:"stack"`
	Environment  string     `json:"environment"`
	Changed      bool       `json:"changed"`
	DeploymentID string     `json:"deployment_id,omitempty"`
	Status       string     `json:"status"`
	Serial       int64      `json:"serial,omitempty"`
	Plan         *plan.Plan `json:"plan,omitempty"`
	// Unchanged lists the re-evaluated components left alone because their
	// inputs came out equal (docs/plan.md "Changes flow to dependents").
	Unchanged []string `json:"unchanged,omitempty"`
	// Summary counts what the deployment did (deploy.Summary); omitted
	// when nothing was applied.
	Summary *summaryJSON `json:"summary,omitempty"`
	Error   string       `json:"error,omitempty"`
}

// summaryJSON is deploy.Summary in --json: counts, and the failed
// components with their errors.
type summaryJSON struct {
	Created    int          `json:"created"`
	Updated    int          `json:"updated"`
	Replaced   int          `json:"replaced"`
	Deleted    int          `json:"deleted"`
	Failed     []failedJSON `json:"failed"`
	Cancelled  int          `json:"cancelled"`
	Pending    int          `json:"pending"`
	Unchanged  int          `json:"unchanged"`
	NotStarted int          `json:"not_started"`
}

type failedJSON struct {
	Address string `json:"address"`
	Error   string `json:"error"`
}

func toSummaryJSON(s deploy.Summary) *summaryJSON {
	j := &summaryJSON{Created: s.Created, Updated: s.Updated, Replaced: s.Replaced, Deleted: s.Deleted, Failed: []failedJSON{},
		Cancelled: s.Cancelled, Pending: s.Pending, Unchanged: s.Unchanged, NotStarted: s.NotStarted}
	for _, r := range s.Failed {
		j.Failed = append(j.Failed, failedJSON{Address: r.Address, Error: planview.OneLine(r.Err)})
	}
	return j
}

func deployResultJSON(out *deploy.Outcome, err error) deployJSON {
	j := deployJSON{Status: "no-changes", Plan: out.Plan, Unchanged: out.Unchanged}
	if out.Plan != nil {
		j.Stack, j.Environment, j.Changed = out.Plan.Stack, out.Plan.Environment, out.Plan.HasChanges()
	}
	if out.Deployment.DeploymentID != "" {
		j.DeploymentID, j.Status, j.Serial = out.Deployment.DeploymentID, string(out.Deployment.Status), out.Head.Serial
		j.Summary = toSummaryJSON(out.Summary)
	}
	if err != nil {
		j.Error = err.Error()
		var skipped *deploy.SkippedError
		var errored *core.ErroredStateError
		switch {
		case errors.As(err, &skipped):
			j.Status = "skipped"
		case errors.As(err, &errored):
			j.Status = statusNotWritten
		case j.Status == "no-changes":
			j.Status = "failed"
		}
	}
	return j
}

// statusNotWritten is the status of a deployment whose engines ran but
// whose state write failed (core.ErroredStateError): its changes are in
// the errored state file only.
const statusNotWritten = "state-not-written"

func printDeploySummary(w io.Writer, t deploy.Target, out *deploy.Outcome, err error) {
	if !out.Plan.HasChanges() || out.Deployment.DeploymentID == "" {
		return
	}
	d, s := out.Deployment, out.Summary
	if err != nil && errors.Is(err, deploy.ErrDeclined) {
		return
	}
	replaced := ""
	if s.Replaced > 0 {
		replaced = fmt.Sprintf(", %d replaced", s.Replaced)
	}
	status := string(d.Status)
	var errored *core.ErroredStateError
	if errors.As(err, &errored) {
		status = statusNotWritten
	}
	fmt.Fprintf(w, "\nDeployment %s %s in %.1fs: %d created, %d updated%s, %d deleted",
		d.DeploymentID, status, d.DurationSeconds, s.Created, s.Updated, replaced, s.Deleted)
	if s.Imported > 0 {
		fmt.Fprintf(w, ", %d imported", s.Imported)
	}
	if len(d.Moved) > 0 {
		fmt.Fprintf(w, ", %d moved", len(d.Moved))
	}
	if s.Unchanged > 0 {
		fmt.Fprintf(w, ", %d re-evaluated and unchanged", s.Unchanged)
	}
	if !s.OK() || d.Status != statestore.DeploymentSuccess {
		// Failed means what it means everywhere (deploy.Summary.Failed): the
		// engine tried and failed; stopped steps are counted apart.
		fmt.Fprintf(w, ", %d failed", len(s.Failed))
		if s.Cancelled > 0 {
			fmt.Fprintf(w, ", %d cancelled", s.Cancelled)
		}
		if s.Pending > 0 {
			fmt.Fprintf(w, ", %d pending", s.Pending)
		}
		if s.NotStarted > 0 {
			fmt.Fprintf(w, ", %d not started", s.NotStarted)
		}
	}
	fmt.Fprint(w, ".")
	if out.Head.Serial > 0 {
		fmt.Fprintf(w, " State %s/%s is at serial %d.", t.Stack, t.Env, out.Head.Serial)
	}
	fmt.Fprintln(w)
}

// RenderDeploy shows the outcome of a deploy or destroy of t: the JSON
// result (asJSON), the plan a policy denied, or the summary; it returns err.
func RenderDeploy(ios *IOStreams, asJSON bool, t deploy.Target, out *deploy.Outcome, err error) error {
	var denied *policy.DeniedError
	if errors.As(err, &denied) && out != nil && out.Plan != nil && !asJSON {
		// Denied before any engine ran: the plan and its policy results
		// say why; nothing was applied or written.
		if rerr := planview.NewHuman(ios.ColorOut(), ios.Mask).Render(ios.Out, out.Plan); rerr != nil {
			return rerr
		}
		return err
	}
	if asJSON && out != nil {
		j := deployResultJSON(out, err)
		j.Stack, j.Environment = cmp.Or(j.Stack, t.Stack), cmp.Or(j.Environment, t.Env) // a skipped deploy has no plan
		if jerr := ios.PrintJSON(j); jerr != nil {
			return jerr
		}
	} else if out != nil && out.Plan != nil {
		printDeploySummary(ios.Out, t, out, err)
	}
	return err
}

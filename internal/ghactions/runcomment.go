package ghactions

import (
	"context"
	"fmt"
	"net/http"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// CommentRunPlan writes plan p as the section of t's stack in the one pull
// request comment of matrix run runID (plan --github-comment --run-id,
// docs/many-stacks.md#pull-request-comment-of-a-matrix-run): each job of
// the run writes its own section and keeps the others' (UpsertSection).
// Failures are printed as CommentPlan's are, and never fail the plan.
func (r *Reporter) CommentRunPlan(ctx context.Context, runID string, t deploy.Target, p *plan.Plan) {
	r.postComment(ctx, "the plan itself succeeded", func(ctx context.Context, hc *http.Client, pr PullRequest, runURL string) (string, bool, error) {
		return UpsertSection(ctx, hc, pr, runSection(runID, t, p, runURL, r.masker.Mask))
	})
}

// runMarker is the hidden HTML comment that finds the comment of one
// matrix run and environment; it never matches a stack's own marker
// (commentMarker) nor a plan --all comment's (stacksMarker).
func runMarker(runID, env string) string {
	return fmt.Sprintf("<!-- deployer-plan run=%s environment=%s -->", markerValue(runID), markerValue(env))
}

// runSection is t's section of the comment of run runID: a collapsible
// section with the plan as the single-stack comment shows it (table and
// diff), or one line when the plan has no changes; the whole passed
// through mask, and cut to the room the other sections leave.
func runSection(runID string, t deploy.Target, p *plan.Plan, runURL string, mask func(string) string) SectionComment {
	esc := sanitize.Masked{Mask: mask}
	head := fmt.Sprintf("### deployer plan: run `%s`, %s\n\nOne section per stack, written by its job of the run.\n\n",
		esc.CodeSpan(runID), esc.HTML(t.Env))
	pb := newPlanBody(p, esc)
	name := "<code>" + esc.HTML(t.Stack) + "</code>"
	return SectionComment{
		Marker: runMarker(runID, t.Env),
		Head:   runMarker(runID, t.Env) + "\n" + mask(head), // the marker starts the body as it is
		Foot:   mask("\n" + commentFoot(runURL)),
		Key:    t.Stack,
		Render: func(room int) string {
			if !p.HasChanges() {
				return mask(name + ": no changes.\n\n")
			}
			open := planview.ChangesCell(runner.StackResult{Plan: p, Status: runner.StackChanges})
			sec := commentSection{open: mask(name + ": " + open), plan: &pb}
			text, cut := sec.fit(room)
			if cut {
				note := mask(cutNote("This plan is cut here", "The whole plan is", runURL))
				if text, _ = sec.fit(room - runeLen(note)); text != "" {
					text += note
				}
			}
			if text == "" {
				text = mask(name + ": the plan does not fit in the comment; see the run's summary.\n\n")
			}
			return text
		},
	}
}

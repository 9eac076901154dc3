package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/plan"
)

// commentTimeout bounds the requests of one plan comment.
const commentTimeout = 30 * time.Second

// CommentPlan posts plan p as the pull request comment of t's stack and
// environment, or updates it in place (plan --github-comment,
// docs/github-actions.md#plan-comments-on-pull-requests). A comment that
// cannot be posted never fails the plan: the reason is printed (an
// ::error annotation under Actions); outside a
// pull request it prints a note.
func (r *GitHubReporter) CommentPlan(ctx context.Context, t deploy.Target, p *plan.Plan) {
	pr, err := ghactions.DetectPullRequest(r.getenv)
	r.masker.Add(pr.Token)
	if errors.Is(err, ghactions.ErrNotPullRequest) {
		fmt.Fprintf(r.errOut, "No plan comment: %v.\n", err)
		return
	}
	if err == nil {
		marker, body := planComment(t, p, r.runURL(), r.masker.Mask)
		cctx, cancel := context.WithTimeout(ctx, commentTimeout)
		defer cancel()
		var url string
		var created bool
		url, created, err = ghactions.UpsertComment(cctx, &http.Client{Timeout: commentTimeout}, pr, marker, body)
		if err == nil {
			verb := "Updated"
			if created {
				verb = "Posted"
			}
			fmt.Fprintf(r.errOut, "%s the plan comment on pull request #%d: %s\n", verb, pr.Number, url)
			return
		}
	}
	msg := r.masker.Mask(fmt.Sprintf("the plan comment was not posted on pull request #%d: %v; the plan itself succeeded", pr.Number, err))
	if r.Env().Actions {
		r.annotate(ghactions.Error, "Plan comment not posted", msg)
		return
	}
	fmt.Fprintln(r.errOut, "Error: "+msg)
}

// runURL is the link to this workflow run, whose summary holds the whole
// plan ("" outside Actions).
func (r *GitHubReporter) runURL() string {
	gh := r.Env()
	if gh.ServerURL == "" || gh.Repository == "" || gh.RunID == "" {
		return ""
	}
	u := gh.ServerURL + "/" + gh.Repository + "/actions/runs/" + gh.RunID
	if a := r.getenv("GITHUB_RUN_ATTEMPT"); a != "" && a != "1" {
		u += "/attempts/" + a
	}
	return u
}

// commentMarker is the hidden HTML comment that finds the comment of one
// stack and environment again on the next push.
func commentMarker(t deploy.Target) string {
	return fmt.Sprintf("<!-- deployer-plan stack=%s environment=%s -->", t.Stack, t.Env)
}

// planComment renders the pull request comment of plan p: the marker, the
// plan table of the job summary and the human plan as a collapsible diff,
// passed through mask, and cut to fit in ghactions.MaxCommentChars with a
// link to runURL (the run's summary holds the whole plan).
func planComment(t deploy.Target, p *plan.Plan, runURL string, mask func(string) string) (marker, body string) {
	marker = commentMarker(t)
	head := marker + "\n" + fmt.Sprintf("### deployer plan: %s/%s\n\n", t.Stack, t.Env)
	var table strings.Builder
	writePlanTable(&table, p)
	var text bytes.Buffer
	_ = NewHumanPlanRenderer(false).Render(&text, p)
	diff := diffBlock(text.String())

	foot := ""
	if runURL != "" {
		foot = fmt.Sprintf("[Workflow run](%s)\n", runURL)
	}
	cutNote := "\n**The plan is cut here**: it is longer than a pull request comment may be."
	if runURL != "" {
		cutNote += fmt.Sprintf(" The whole plan is in the [run's summary](%s).", runURL)
	}
	cutNote += "\n\n"

	headM, tableM, diffM, footM, cutM := mask(head), mask(table.String()), mask(diff), mask(foot), mask(cutNote)
	open, closing := "<details><summary>Plan diff</summary>\n\n```diff\n", "```\n\n</details>\n\n"
	full := headM + tableM
	if p.HasChanges() {
		full += open + diffM + closing
	}
	full += footM
	if runeLen(full) <= ghactions.MaxCommentChars {
		return marker, full
	}
	// Too long: keep the table and as much of the diff as fits, else as
	// much of the table as fits.
	budget := ghactions.MaxCommentChars - runeLen(headM) - runeLen(cutM) - runeLen(footM)
	if rest := budget - runeLen(tableM) - runeLen(open) - runeLen(closing); rest > 0 {
		return marker, headM + tableM + open + cutLines(diffM, rest) + closing + cutM + footM
	}
	return marker, headM + cutLines(tableM, budget) + "\n" + cutM + footM
}

// diffBlock turns the human plan into lines a ```diff block colours: the
// marker of each change moves to the first column, ~ and ± (update,
// replace) become ! (changed), as tfcmt shows Terraform plans.
func diffBlock(text string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		trimmed := strings.TrimLeft(line, " ")
		lead := len(line) - len(trimmed)
		m, size := utf8.DecodeRuneInString(trimmed)
		marker := map[rune]string{'+': "+", '-': "-", '~': "!", '±': "!"}[m]
		if marker == "" || len(trimmed) <= size || trimmed[size] != ' ' {
			b.WriteString(" " + line)
			continue
		}
		b.WriteString(marker + strings.Repeat(" ", lead) + trimmed[size:])
	}
	return b.String()
}

// cutLines returns the whole lines of s that fit in n characters.
func cutLines(s string, n int) string {
	var b strings.Builder
	used := 0
	for line := range strings.Lines(s) {
		l := runeLen(line)
		if used+l > n {
			break
		}
		b.WriteString(line)
		used += l
	}
	return b.String()
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

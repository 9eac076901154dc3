package ghactions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// commentTimeout bounds the requests of one plan comment.
const commentTimeout = 30 * time.Second

// CommentPlan posts plan p as the pull request comment of t's stack and
// environment, or updates it in place (plan --github-comment,
// docs/github-actions.md#plan-comments-on-pull-requests). A comment that
// cannot be posted never fails the plan: the reason is printed (an
// ::error annotation under Actions); outside a
// pull request it prints a note.
func (r *Reporter) CommentPlan(ctx context.Context, t deploy.Target, p *plan.Plan) {
	r.upsertComment(ctx, "the plan itself succeeded", func(runURL string) (string, string) {
		return planComment(t, p, runURL, r.masker.Mask)
	})
}

// upsertComment posts the comment render returns (its marker and body,
// given the run's URL) on the workflow run's pull request, or updates the
// comment that holds the marker, and prints what it did. A failure is
// printed with outcome (what it leaves as it was) and never returned.
func (r *Reporter) upsertComment(ctx context.Context, outcome string, render func(runURL string) (marker, body string)) {
	r.postComment(ctx, outcome, func(ctx context.Context, hc *http.Client, pr PullRequest, runURL string) (string, bool, error) {
		marker, body := render(runURL)
		return UpsertComment(ctx, hc, pr, marker, body)
	})
}

// postComment runs post (which creates or updates a comment of pr) on the
// workflow run's pull request within commentTimeout, and prints what it
// did. A failure is printed with outcome (what it leaves as it was) and
// never returned.
func (r *Reporter) postComment(ctx context.Context, outcome string, post func(ctx context.Context, hc *http.Client, pr PullRequest, runURL string) (string, bool, error)) {
	pr, err := DetectPullRequest(r.getenv)
	r.masker.Add(pr.Token)
	if errors.Is(err, ErrNotPullRequest) {
		fmt.Fprintf(r.errOut, "No plan comment: %v.\n", err)
		return
	}
	if err == nil {
		cctx, cancel := context.WithTimeout(ctx, commentTimeout)
		defer cancel()
		var url string
		var created bool
		url, created, err = post(cctx, &http.Client{Timeout: commentTimeout}, pr, r.runURL())
		if err == nil {
			verb := "Updated"
			if created {
				verb = "Posted"
			}
			fmt.Fprintf(r.errOut, "%s the plan comment on pull request #%d: %s\n", verb, pr.Number, url)
			return
		}
	}
	msg := r.masker.Mask(fmt.Sprintf("the plan comment was not posted on pull request #%d: %v; %s", pr.Number, err, outcome))
	if r.Env().Actions {
		r.annotate(Error, "Plan comment not posted", msg)
		return
	}
	fmt.Fprintln(r.errOut, "Error: "+msg)
}

// runURL is the link to this workflow run, whose summary holds the whole
// plan ("" outside Actions).
func (r *Reporter) runURL() string {
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
// passed through mask, and cut to fit in MaxCommentChars with a
// link to runURL (the run's summary holds the whole plan).
func planComment(t deploy.Target, p *plan.Plan, runURL string, mask func(string) string) (marker, body string) {
	marker = commentMarker(t)
	headM := marker + "\n" + mask(fmt.Sprintf("### deployer plan: %s/%s\n\n", t.Stack, t.Env)) // the marker starts the body as it is
	footM, cutM := mask(commentFoot(runURL)), mask(cutNote("The plan is cut here", "The whole plan is", runURL))
	pb := newPlanBody(p, sanitize.Masked{Mask: mask})
	room := MaxCommentChars - runeLen(headM) - runeLen(footM)
	text, cut := pb.fit(room)
	if cut {
		text, _ = pb.fit(room - runeLen(cutM))
		text += cutM
	}
	return marker, headM + text + footM
}

// commentFoot links the workflow run ("" outside Actions).
func commentFoot(runURL string) string {
	if runURL == "" {
		return ""
	}
	return fmt.Sprintf("[Workflow run](%s)\n", runURL)
}

// cutNote says what of a comment is cut (cut, e.g. "The plan is cut
// here") because it is longer than a comment may be, and that the run's
// summary (runURL) holds whole what it names.
func cutNote(cut, whole, runURL string) string {
	note := fmt.Sprintf("\n**%s**: it is longer than a pull request comment may be.", cut)
	if runURL != "" {
		note += fmt.Sprintf(" %s in the [run's summary](%s).", whole, runURL)
	}
	return note + "\n\n"
}

// planBody is one plan as a comment shows it, masked: the plan table of
// the job summary and, with changes, the human plan as a collapsible diff
// (sanitize.CodeText) between open and closing, whose code fence is longer
// than any run of backticks in it (sanitize.Fence). Data is masked before
// it is escaped (esc), and the whole masked again.
type planBody struct {
	table, diff   string
	open, closing string
	changes       bool
}

func newPlanBody(p *plan.Plan, esc sanitize.Masked) planBody {
	var table strings.Builder
	writePlanTable(&table, esc, p)
	var text bytes.Buffer
	_ = planview.NewHuman(false, esc.Mask).Render(&text, p)
	diff := esc.CodeText(diffBlock(text.String()))
	fence := sanitize.Fence(diff)
	return planBody{table: esc.Raw(table.String()), diff: diff, changes: p.HasChanges(),
		open: "<details><summary>Plan diff</summary>\n\n" + fence + "diff\n", closing: fence + "\n\n</details>\n\n"}
}

// fit renders b in at most room characters: whole, else the table and as
// many whole lines of the diff as fit, else as many lines of the table as
// fit; cut says it was cut. A code block or <details> it opens is closed.
func (b planBody) fit(room int) (text string, cut bool) {
	full := b.table
	if b.changes {
		full += b.open + b.diff + b.closing
	}
	if runeLen(full) <= room {
		return full, false
	}
	if rest := room - runeLen(b.table) - runeLen(b.open) - runeLen(b.closing); rest > 0 && b.changes {
		return b.table + b.open + cutLines(b.diff, rest) + b.closing, true
	}
	return cutLines(b.table, room-1) + "\n", true
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

// CommentStacks posts the plans of a plan --all run as one pull request
// comment, or updates the comment of the same environment and stacks root
// in place (plan --all --github-comment, docs/many-stacks.md#pull-request-comment):
// a table of every stack's result, then each stack's plan or error in a
// collapsible section. none, when not "", says why no stack was planned.
// Failures are printed as CommentPlan's are, and never change the exit
// code.
func (r *Reporter) CommentStacks(ctx context.Context, env string, results []runner.StackResult, none string) {
	root := r.stacksRoot()
	r.upsertComment(ctx, "the plans are as printed above", func(runURL string) (string, string) {
		return stacksComment(env, root, results, none, runURL, r.masker.Mask, r.hints.Remedy)
	})
}

// stacksRoot names the directory --all ran in: relative to
// GITHUB_WORKSPACE (the repository's checkout; "." at its top) when it is
// inside it, else its absolute path.
func (r *Reporter) stacksRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	if ws := r.getenv("GITHUB_WORKSPACE"); ws != "" {
		if rel, err := filepath.Rel(ws, wd); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(wd)
}

// stacksMarker is the hidden HTML comment that finds the comment of one
// plan --all (environment and stacks root) again on the next push; it
// never matches a stack's own marker (commentMarker).
func stacksMarker(env, root string) string {
	root = strings.NewReplacer(" ", "%20", ">", "%3E", "--", "-%2D").Replace(root)
	return fmt.Sprintf("<!-- deployer-plan all environment=%s root=%s -->", env, root)
}

// stacksComment renders the comment of a plan --all run: the marker, a
// table of every stack (result, changes, note) with the counts, and one
// <details> section per stack with changes (its plan, as planComment
// shows it) or that failed (its error as remedy words it), passed through
// mask. Too long for
// MaxCommentChars, the sections share the room left by the table
// fairly (one short plan stays whole; long ones are cut to an equal share,
// at whole lines) and a note links runURL.
func stacksComment(env, root string, results []runner.StackResult, none, runURL string, mask func(string) string, remedy func(error) string) (marker, body string) {
	esc := sanitize.Masked{Mask: mask}
	marker = stacksMarker(env, root)
	head := fmt.Sprintf("### deployer plan --all: %s", esc.Markdown(env))
	if root != "." {
		head += fmt.Sprintf(" in `%s`", esc.CodeSpan(root))
	}
	headM := marker + "\n" + mask(head+"\n\n") // the marker starts the body as it is
	footM := mask(commentFoot(runURL))
	cutM := mask(cutNote("Plans are cut to share the comment", "Every whole plan is", runURL))

	var tb strings.Builder
	if none != "" {
		tb.WriteString(esc.Markdown(none) + "\n\n")
	} else {
		writeResultsTable(&tb, esc, results)
	}
	tableM := mask(tb.String())
	var sections []commentSection
	for _, res := range results {
		summary := fmt.Sprintf("<code>%s</code> (%s): ", esc.HTML(res.Stack), esc.HTML(res.Dir))
		switch {
		case res.Status == runner.StackFailed:
			msg := res.Reason
			if res.Err != nil {
				msg = remedy(res.Err)
			}
			sections = append(sections, commentSection{open: mask(summary + "failed"), text: esc.CodeText(msg)})
		case res.Plan != nil && (res.Plan.HasChanges() || res.Status == runner.StackDenied):
			pb := newPlanBody(res.Plan, esc)
			open := planview.ChangesCell(res)
			if res.Status == runner.StackDenied {
				open = strings.TrimSpace(open + " denied by policy")
			}
			sections = append(sections, commentSection{open: mask(summary + open), plan: &pb})
		}
	}

	rendered := make([]string, len(sections))
	total := runeLen(headM) + runeLen(tableM) + runeLen(footM)
	for i, s := range sections {
		rendered[i], _ = s.fit(MaxCommentChars)
		total += runeLen(rendered[i])
	}
	if total > MaxCommentChars {
		room := MaxCommentChars - runeLen(headM) - runeLen(tableM) - runeLen(cutM) - runeLen(footM)
		if room < 0 {
			return marker, headM + cutLines(tableM, room+runeLen(tableM)-1) + "\n" + cutM + footM
		}
		shareOut(rendered, sections, room)
		return marker, headM + tableM + strings.Join(rendered, "") + cutM + footM
	}
	return marker, headM + tableM + strings.Join(rendered, "") + footM
}

// shareOut cuts the rendered sections to fit room together: the shortest
// stay whole while they fit in an equal share of what is left, the others
// are cut to that share (or left out when not even their summary fits).
func shareOut(rendered []string, sections []commentSection, room int) {
	order := make([]int, len(rendered))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return runeLen(rendered[order[a]]) < runeLen(rendered[order[b]]) })
	for k, i := range order {
		share := room / (len(order) - k)
		if n := runeLen(rendered[i]); n <= share {
			room -= n
			continue
		}
		rendered[i], _ = sections[i].fit(share)
		room -= runeLen(rendered[i])
	}
}

// writeResultsTable writes every stack of a plan --all run, in dependency
// order (stack, directory, result, planned changes, note), and the counts.
func writeResultsTable(b *strings.Builder, esc sanitize.Masked, results []runner.StackResult) {
	b.WriteString("| Stack | Directory | Result | Changes | Note |\n|---|---|---|---|---|\n")
	counts := map[runner.StackStatus]int{}
	for _, res := range results {
		counts[res.Status]++
		note := planview.NoteCell(res, esc)
		switch res.Status {
		case runner.StackFailed:
			note = "the error is below"
		case runner.StackDenied:
			note = "the policies' results are below"
		}
		if r := []rune(note); len(r) > 300 {
			note = string(r[:300]) + "…"
		}
		fmt.Fprintf(b, "| `%s` | `%s` | %s | %s | %s |\n", esc.CodeSpan(res.Stack), esc.CodeSpan(res.Dir),
			strings.ReplaceAll(string(res.Status), "-", " "), orDash(planview.ChangesCell(res)), orDash(sanitize.Markdown(note)))
	}
	fmt.Fprintf(b, "\n**%d stacks:** %d with changes, %d without changes, %d failed, %d skipped",
		len(results), counts[runner.StackChanges], counts[runner.StackNoChanges], counts[runner.StackFailed], counts[runner.StackSkipped])
	if n := counts[runner.StackDenied]; n > 0 {
		fmt.Fprintf(b, ", %d denied by policy", n)
	}
	if n := counts[runner.StackCancelled]; n > 0 {
		fmt.Fprintf(b, ", %d cancelled", n)
	}
	b.WriteString(".\n\n")
}

// commentSection is one stack's collapsible part of a plan --all comment:
// its plan, or the text of its error. open is its <summary> text, masked.
type commentSection struct {
	open string
	plan *planBody
	text string
}

// fit renders s in at most room characters ("" when its frame does not
// fit); cut says it was cut.
func (s commentSection) fit(room int) (string, bool) {
	open, closing := "<details><summary>"+s.open+"</summary>\n\n", "</details>\n\n"
	inner := room - runeLen(open) - runeLen(closing)
	if inner < 0 {
		return "", true
	}
	if s.plan != nil {
		text, cut := s.plan.fit(inner)
		return open + text + closing, cut
	}
	text := strings.TrimRight(s.text, "\n") + "\n"
	fence, end := sanitize.Fence(text)+"text\n", sanitize.Fence(text)+"\n\n"
	if runeLen(fence+text+end) <= inner {
		return open + fence + text + end + closing, false
	}
	return open + fence + cutLines(text, inner-runeLen(fence)-runeLen(end)) + end + closing, true
}

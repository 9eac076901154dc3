package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
)

// What the commands write under GitHub Actions (docs/github-actions.md):
// a Markdown job summary, step outputs, and annotations. Outside Actions
// (no GITHUB_ACTIONS=true, no GITHUB_STEP_SUMMARY/GITHUB_OUTPUT) nothing here
// writes anything.

// warnFileState prints, once, that the file:// state backend stateURL on a
// CI runner vanishes with the runner.
func (r *GitHubReporter) warnFileState(stateURL string) {
	if !r.Env().CI || !r.first(&r.warnedFileState) {
		return
	}
	msg := fmt.Sprintf("the state backend is %s on a CI runner: the state, its history and (with a file:// lock) the locks "+
		"vanish with the runner, and the next run starts from nothing. Keep state in S3 and locks in DynamoDB: "+
		"set backend.state: s3://BUCKET and backend.lock: dynamodb://TABLE in deployer.yaml (or DEPLOYER_BACKEND_STATE "+
		"and DEPLOYER_BACKEND_LOCK), create them with deployer backend init; see docs/github-actions.md",
		backendurl.Redact(stateURL))
	if r.Env().Actions {
		r.annotate(ghactions.Warning, "State will be lost with the runner", msg)
		return
	}
	fmt.Fprintln(r.errOut, "Warning: "+msg)
}

// lockWait notices, once per run under GitHub Actions, a wait for the lock
// h holds (GitHub shows at most 10 notices per step).
func (r *GitHubReporter) lockWait(h lockmgr.Record) {
	if !r.Env().Actions || !r.first(&r.noticedWait) {
		return
	}
	r.annotate(ghactions.Notice, "Waiting for lock "+h.LockKey,
		fmt.Sprintf("waiting for lock %s held by %s (%s, pid %d, since %s)", h.LockKey, h.LockedBy,
			orDash(h.Metadata.Operation), h.Metadata.PID, time.Unix(h.LockedAt, 0).UTC().Format(time.RFC3339)))
}

// ReportError annotates err under GitHub Actions (main has printed it) and,
// for a held lock, adds the holder and the unlock command to the job
// summary. Component failures were annotated by the command that saw them.
func (gh *GitHubReporter) ReportError(err error) {
	if err == nil || errors.As(err, new(*ExitCodeError)) {
		return
	}
	var held *lockmgr.HeldError
	isHeld := errors.As(err, &held)
	if isHeld && gh.Env().StepSummary != "" {
		gh.summarize(heldSummary(gh.Command(), held.Record))
	}
	if !gh.Env().Actions || gh.wasAnnotated() {
		return
	}
	title := "deployer failed"
	if c := gh.Command(); c != "" {
		title = c + " failed"
	}
	if isHeld {
		title = fmt.Sprintf("Lock %s held by %s", held.Record.LockKey, held.Record.LockedBy)
	}
	gh.annotate(ghactions.Error, title, Remedy(err))
}

// heldSummary is the summary section of a command stopped by a held lock.
func heldSummary(command string, rec lockmgr.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: lock held\n\n", orDefault(command, "deployer"))
	fmt.Fprintf(&b, "Lock `%s` is held by **%s**", rec.LockKey, mdText(rec.LockedBy))
	if op := rec.Metadata.Operation; op != "" {
		fmt.Fprintf(&b, " (%s", mdText(string(op)))
		if id := rec.Metadata.DeploymentID; id != "" {
			fmt.Fprintf(&b, " `%s`", id)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " since %s.\n\n", time.Unix(rec.LockedAt, 0).UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Wait for it with `--lock-timeout` (the action's `lock-timeout` input), or, if the holder is gone, break it with:\n\n```sh\n%s\n```\n\n", unlockCommand(rec))
	return b.String()
}

// reportDrift writes, under GitHub Actions, one warning annotation per
// drifted component naming its fields, and the drift to the job summary
// (docs/github-actions.md#nightly-drift-check). The values were masked by
// the use case.
func (r *GitHubReporter) Drift(t deploy.Target, drift []engine.Drift) {
	if len(drift) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Drift: %s/%s\n\n| Component | Field | Recorded | Live |\n|---|---|---|---|\n", t.Stack, t.Env)
	for _, d := range drift {
		if d.Missing {
			r.annotate(ghactions.Warning, "Drift in "+d.Address, "its live state is gone; a deploy with no change to it does not create it again (docs/plan.md#drift)")
			fmt.Fprintf(&b, "| `%s` | – | – | (gone) |\n", d.Address)
			continue
		}
		var fields []string
		for _, fd := range d.Fields {
			fields = append(fields, fd.Path)
			fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | `%s` |\n", d.Address, mdCode(fd.Path),
				mdCode(formatValue(fd.Old, fd.Sensitive)), mdCode(formatValue(fd.New, fd.Sensitive)))
		}
		r.annotate(ghactions.Warning, "Drift in "+d.Address, "changed outside deployer: "+strings.Join(fields, ", "))
	}
	b.WriteString("\n")
	r.summarize(b.String())
}

// planSummary is the job summary of `plan`: the plan as a table.
func planSummary(command string, t deploy.Target, p *plan.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s/%s\n\n", command, t.Stack, t.Env)
	writePlanTable(&b, p)
	return b.String()
}

// writePlanTable writes the changes of p as a Markdown table (component,
// kind, action, changed fields with masked values) and the plan's counts.
func writePlanTable(b *strings.Builder, p *plan.Plan) {
	if !p.HasChanges() {
		b.WriteString("No changes. Infrastructure matches the configuration.\n\n")
		return
	}
	b.WriteString("| Component | Kind | Action | Changed fields |\n|---|---|---|---|\n")
	for _, s := range p.Changes() {
		var fields []string
		for _, d := range s.Diffs {
			fields = append(fields, mdField(maskDiff(d)))
		}
		if line := deletedByLine(s); line != "" {
			fields = append(fields, mdText(line))
		}
		if s.Runs != nil {
			runs := "runs"
			if s.Action == plan.Replace {
				runs = "delete runs"
			}
			if *s.Runs != "" {
				fields = append(fields, runs+" `"+mdCode(*s.Runs)+"`")
			} else {
				fields = append(fields, runs+" nothing (no delete command)")
			}
		}
		cell := strings.Join(fields, "<br>")
		if cell == "" {
			cell = "–"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s %s | %s |\n", s.Address, mdText(s.Kind), actionMarker[s.Action], s.Action, cell)
	}
	sum := p.Summary
	fmt.Fprintf(b, "\n**Plan:** %d to create, %d to update, %d to replace, %d to delete, %d unchanged.\n\n",
		sum.Create, sum.Update, sum.Replace, sum.Delete, sum.NoOp)
}

// mdField renders one masked field diff: `path`: `old` → `new`.
func mdField(d plan.FieldDiff) string {
	val := func(v any) string { return "`" + mdCode(formatValue(v, d.Sensitive)) + "`" }
	s := "`" + mdCode(d.Path) + "`: "
	switch d.Op {
	case plan.OpAdd:
		s += val(d.New)
	case plan.OpRemove:
		s += val(d.Old) + " → (removed)"
	default:
		s += val(d.Old) + " → " + val(d.New)
	}
	if d.ForcesReplacement {
		s += " (forces replacement)"
	}
	return s
}

// deploySummary is the job summary of deploy/destroy: the plan table and
// the result.
func deploySummary(command string, t deploy.Target, out *deploy.Outcome, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s/%s\n\n", command, t.Stack, t.Env)
	writePlanTable(&b, out.Plan)
	d := out.Deployment
	if d.DeploymentID == "" {
		if errors.Is(err, deploy.ErrDeclined) {
			b.WriteString("**Result:** not applied (the plan was not confirmed).\n\n")
		}
		return b.String()
	}
	s := out.Summary
	fmt.Fprintf(&b, "**Result:** %s: %d created, %d updated, %d replaced, %d deleted, %d failed.\n\n",
		d.Status, s.Created, s.Updated, s.Replaced, s.Deleted, len(s.Failed))
	b.WriteString("| Deployment | Serial | Duration |\n|---|---|---|\n")
	serial := "–"
	if out.Head.Serial > 0 {
		serial = strconv.FormatInt(out.Head.Serial, 10)
	}
	fmt.Fprintf(&b, "| `%s` | %s | %.1fs |\n\n", d.DeploymentID, serial, d.DurationSeconds)
	if len(s.Failed) > 0 {
		b.WriteString("Failed components:\n\n")
		for _, r := range s.Failed {
			fmt.Fprintf(&b, "- `%s`: %s\n", r.Address, mdText(oneLine(r.Err)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Plan writes the job summary and the changes and serial step outputs of a
// plan under GitHub Actions. drifted says plan --refresh found drift (its
// own section, Drift, comes first): a plan without changes then does not
// say that the infrastructure matches (docs/plan.md#drift).
func (r *GitHubReporter) Plan(t deploy.Target, p *plan.Plan, drifted bool) {
	if drifted && !p.HasChanges() {
		r.summarize(fmt.Sprintf("### %s: %s/%s\n\n%s\n\n", r.Command(), t.Stack, t.Env, strings.ReplaceAll(NoChangesButDrift, "\n", " ")))
	} else {
		r.summarize(planSummary(r.Command(), t, p))
	}
	r.setOutputs(ghactions.Output{Name: "changes", Value: strconv.FormatBool(p.HasChanges())},
		ghactions.Output{Name: "serial", Value: strconv.FormatInt(p.Serial, 10)})
}

// Deploy writes the summary, outputs and component annotations of a
// deploy or destroy under GitHub Actions, from its Outcome's Summary.
func (r *GitHubReporter) Deploy(t deploy.Target, out *deploy.Outcome, err error) {
	if out == nil || out.Plan == nil {
		return
	}
	r.summarize(deploySummary(r.Command(), t, out, err))
	outs := []ghactions.Output{{Name: "changes", Value: strconv.FormatBool(out.Plan.HasChanges())}}
	if out.Head.Serial > 0 {
		outs = append(outs, ghactions.Output{Name: "serial", Value: strconv.FormatInt(out.Head.Serial, 10)})
	} else {
		outs = append(outs, ghactions.Output{Name: "serial", Value: strconv.FormatInt(out.Plan.Serial, 10)})
	}
	if id := out.Deployment.DeploymentID; id != "" {
		outs = append(outs, ghactions.Output{Name: "deployment-id", Value: id})
	}
	r.setOutputs(outs...)
	if failed := out.Summary.Failed; len(failed) > 0 && r.Env().Actions {
		for _, res := range failed {
			r.annotate(ghactions.Error, "Component "+res.Address+" failed", oneLine(res.Err))
		}
		r.markAnnotated()
	}
}

func oneLine(err error) string {
	if err == nil {
		return "failed"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// mdText escapes text for a Markdown table cell or paragraph.
func mdText(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "'").Replace(s)
}

// mdCode escapes text inside a code span in a table cell.
func mdCode(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package ghactions

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// What the commands write under GitHub Actions (docs/github-actions.md):
// a Markdown job summary, step outputs, and annotations. Outside Actions
// (no GITHUB_ACTIONS=true, no GITHUB_STEP_SUMMARY/GITHUB_OUTPUT) nothing here
// writes anything.

// WarnFileState prints, once, that the file:// state backend stateURL on a
// CI runner vanishes with the runner.
func (r *Reporter) WarnFileState(stateURL string) {
	if !r.Env().CI || !r.first(&r.warnedFileState) {
		return
	}
	msg := fmt.Sprintf("the state backend is %s on a CI runner: the state, its history and (with a file:// lock) the locks "+
		"vanish with the runner, and the next run starts from nothing. Keep state in S3 and locks in DynamoDB: "+
		"set backend.state: s3://BUCKET and backend.lock: dynamodb://TABLE in deployer.yaml (or DEPLOYER_BACKEND_STATE "+
		"and DEPLOYER_BACKEND_LOCK), create them with deployer backend init; see docs/github-actions.md",
		backendurl.Redact(stateURL))
	if r.Env().Actions {
		r.annotate(Warning, "State will be lost with the runner", msg)
		return
	}
	fmt.Fprintln(r.errOut, "Warning: "+msg)
}

// LockWait notices, once per run under GitHub Actions, a wait for the lock
// h holds (GitHub shows at most 10 notices per step).
func (r *Reporter) LockWait(h lockmgr.Record) {
	if !r.Env().Actions || !r.first(&r.noticedWait) {
		return
	}
	r.annotate(Notice, "Waiting for lock "+h.LockKey,
		fmt.Sprintf("waiting for lock %s held by %s (%s, pid %d, since %s)", h.LockKey, h.LockedBy,
			orDash(h.Metadata.Operation), h.Metadata.PID, time.Unix(h.LockedAt, 0).UTC().Format(time.RFC3339)))
}

// ReportError annotates err under GitHub Actions (main has printed it) and,
// for a held lock, adds the holder and the unlock command to the job
// summary. Component failures were annotated by the command that saw them.
// main does not call it for an error that only sets the exit code.
func (r *Reporter) ReportError(err error) {
	if err == nil {
		return
	}
	var held *lockmgr.HeldError
	isHeld := errors.As(err, &held)
	if isHeld && r.Env().StepSummary != "" {
		r.Summarize(heldSummary(r.esc(), r.Command(), held.Record, r.hints.UnlockCommand(held.Record)))
	}
	if !r.Env().Actions || r.wasAnnotated() {
		return
	}
	title := "deployer failed"
	if c := r.Command(); c != "" {
		title = c + " failed"
	}
	if isHeld {
		title = fmt.Sprintf("Lock %s held by %s", held.Record.LockKey, held.Record.LockedBy)
	}
	r.annotate(Error, title, r.hints.Remedy(err))
}

// heldSummary is the summary section of a command stopped by a held lock,
// its data masked and escaped by esc.
func heldSummary(esc sanitize.Masked, command string, rec lockmgr.Record, unlock string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: lock held\n\n", orDefault(command, "deployer"))
	fmt.Fprintf(&b, "Lock `%s` is held by **%s**", esc.CodeSpan(rec.LockKey), esc.Markdown(rec.LockedBy))
	if op := rec.Metadata.Operation; op != "" {
		fmt.Fprintf(&b, " (%s", esc.Markdown(string(op)))
		if id := rec.Metadata.DeploymentID; id != "" {
			fmt.Fprintf(&b, " `%s`", esc.CodeSpan(id))
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " since %s.\n\n", time.Unix(rec.LockedAt, 0).UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Wait for it with `--lock-timeout` (the action's `lock-timeout` input), or, if the holder is gone, break it with:\n\n%s\n", esc.CodeBlock("sh", unlock))
	return b.String()
}

// Drift writes, under GitHub Actions, one warning annotation per
// drifted component naming its fields, and the drift to the job summary
// (docs/github-actions.md#nightly-drift-check). The values were masked by
// the use case.
func (r *Reporter) Drift(t deploy.Target, drift []engine.Drift) {
	if len(drift) == 0 {
		return
	}
	esc := r.esc()
	var b strings.Builder
	fmt.Fprintf(&b, "### Drift: %s/%s\n\n| Component | Field | Recorded | Live |\n|---|---|---|---|\n", t.Stack, t.Env)
	for _, d := range drift {
		if d.Missing {
			r.annotate(Warning, "Drift in "+d.Address, "its live state is gone; a deploy with no change to it does not create it again (docs/plan.md#drift)")
			fmt.Fprintf(&b, "| `%s` | – | – | (gone) |\n", esc.CodeSpan(d.Address))
			continue
		}
		var fields []string
		for _, fd := range d.Fields {
			fields = append(fields, fd.Path)
			fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | `%s` |\n", esc.CodeSpan(d.Address), esc.CodeSpan(fd.Path),
				sanitize.CodeSpan(planview.FormatValue(fd.Old, fd.Sensitive, esc.Mask)), sanitize.CodeSpan(planview.FormatValue(fd.New, fd.Sensitive, esc.Mask)))
		}
		r.annotate(Warning, "Drift in "+d.Address, "changed outside deployer: "+strings.Join(fields, ", "))
	}
	b.WriteString("\n")
	r.Summarize(b.String())
}

// planSummary is the job summary of `plan`: the plan as a table.
func planSummary(esc sanitize.Masked, command string, t deploy.Target, p *plan.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s/%s\n\n", command, t.Stack, t.Env)
	writePlanTable(&b, esc, p)
	return b.String()
}

// writePlanTable writes the changes of p as a Markdown table (component,
// kind, action, changed fields with masked values) and the plan's counts,
// then the policies' results (writePolicyTable). Every piece of data is
// masked, then escaped, by esc.
func writePlanTable(b *strings.Builder, esc sanitize.Masked, p *plan.Plan) {
	writeChangesTable(b, esc, p)
	writePolicyTable(b, esc, p.Policy)
}

func writeChangesTable(b *strings.Builder, esc sanitize.Masked, p *plan.Plan) {
	if !p.HasChanges() {
		b.WriteString("No changes. Infrastructure matches the configuration.\n\n")
		return
	}
	if len(p.Changes()) > 0 { // else only outputs change
		b.WriteString("| Component | Kind | Action | Changed fields |\n|---|---|---|---|\n")
	}
	for _, s := range p.Changes() {
		var fields []string
		for _, d := range s.Diffs {
			fields = append(fields, mdField(esc, planview.MaskDiff(d)))
		}
		if line := planview.DeletedByLine(s, esc.Markdown); line != "" {
			fields = append(fields, line)
		}
		if s.Runs != nil {
			runs := "runs"
			if s.Action == plan.Replace {
				runs = "delete runs"
			}
			if *s.Runs != "" {
				fields = append(fields, runs+" `"+esc.CodeSpan(*s.Runs)+"`")
			} else {
				fields = append(fields, runs+" nothing (no delete command)")
			}
		}
		cell := strings.Join(fields, "<br>")
		if cell == "" {
			cell = "–"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s %s%s | %s |\n", esc.CodeSpan(s.Address), esc.Markdown(s.Kind), planview.Marker(s.Action), s.Action,
			sanitize.Markdown(planview.ImportNote(s, esc)), cell)
	}
	sum := p.Summary
	fmt.Fprintf(b, "\n**Plan:** %d to create, %d to update, %d to replace, %d to delete%s, %d unchanged.\n\n",
		sum.Create, sum.Update, sum.Replace, sum.Delete, planview.ImportCount(sum), sum.NoOp)
	writeOutputsTable(b, esc, p.Outputs)
}

// writeOutputsTable writes the plan's Changes to Outputs
// (docs/operations.md#stack-outputs) as the terminal shows them: one row
// per output, its marker and masked values, a value known only after the
// apply as (known after apply).
func writeOutputsTable(b *strings.Builder, esc sanitize.Masked, diffs []plan.FieldDiff) {
	if len(diffs) == 0 {
		return
	}
	b.WriteString("**Changes to Outputs:**\n\n| Output | Change |\n|---|---|\n")
	val := func(d plan.FieldDiff, v any) string {
		if d.Unknown && v == plan.KnownAfterApply {
			return plan.KnownAfterApply
		}
		return "`" + sanitize.CodeSpan(planview.FormatValue(v, d.Sensitive, esc.Mask)) + "`"
	}
	for _, d := range diffs {
		d = planview.MaskDiff(d)
		var change string
		switch d.Op {
		case plan.OpAdd:
			change = "+ " + val(d, d.New)
		case plan.OpRemove:
			change = "- " + val(d, d.Old) + " → (removed)"
		default:
			change = "~ " + val(d, d.Old) + " → " + val(d, d.New)
		}
		fmt.Fprintf(b, "| `%s` | %s |\n", esc.CodeSpan(d.Path), change)
	}
	b.WriteString("\n")
}

// mdField renders one masked field diff: `path`: `old` → `new`.
func mdField(esc sanitize.Masked, d plan.FieldDiff) string {
	val := func(v any) string {
		return "`" + sanitize.CodeSpan(planview.FormatValue(v, d.Sensitive, esc.Mask)) + "`"
	}
	s := "`" + esc.CodeSpan(d.Path) + "`: "
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
// the result, data masked and escaped by esc.
func deploySummary(esc sanitize.Masked, command string, t deploy.Target, out *deploy.Outcome, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s/%s\n\n", command, t.Stack, t.Env)
	writePlanTable(&b, esc, out.Plan)
	d := out.Deployment
	if d.DeploymentID == "" {
		if errors.Is(err, deploy.ErrDeclined) {
			b.WriteString("**Result:** not applied (the plan was not confirmed).\n\n")
		}
		return b.String()
	}
	s := out.Summary
	serial, status := "–", string(d.Status)
	if out.Head.Serial > 0 {
		serial = strconv.FormatInt(out.Head.Serial, 10)
	}
	if err != nil && out.Head.Serial == 0 {
		writeNotSaved(&b, esc, err)
		serial, status = "not saved", "state not saved"
	}
	fmt.Fprintf(&b, "**Result:** %s: %d created, %d updated, %d replaced, %d deleted, %d failed.\n\n",
		status, s.Created, s.Updated, s.Replaced, s.Deleted, len(s.Failed))
	b.WriteString("| Deployment | Serial | Duration |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| `%s` | %s | %.1fs |\n\n", esc.CodeSpan(d.DeploymentID), serial, d.DurationSeconds)
	if len(s.Failed) > 0 {
		b.WriteString("Failed components:\n\n")
		for _, r := range s.Failed {
			fmt.Fprintf(&b, "- `%s`: %s\n", esc.CodeSpan(r.Address), esc.Markdown(planview.OneLine(r.Err)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// writeNotSaved says, first, that a deploy or destroy that ran did not write
// its state (err ended it after the changes were applied), and where the new
// state is when it was kept in an errored file.
func writeNotSaved(b *strings.Builder, esc sanitize.Masked, err error) {
	b.WriteString("**The state was NOT saved**: the infrastructure may have changed, the state does not say so yet.")
	var es *core.ErroredStateError
	if errors.As(err, &es) {
		fmt.Fprintf(b, " The new state is in `%s`; write it with `deployer state push` (the error says how).", esc.CodeSpan(filepath.Base(es.Path)))
	}
	b.WriteString("\n\n")
}

// Plan writes the job summary and the changes and serial step outputs of a
// plan under GitHub Actions. drifted says plan --refresh found drift (its
// own section, Drift, comes first): a plan without changes then does not
// say that the infrastructure matches (docs/plan.md#drift).
func (r *Reporter) Plan(t deploy.Target, p *plan.Plan, drifted bool) {
	if drifted && !p.HasChanges() {
		r.Summarize(fmt.Sprintf("### %s: %s/%s\n\n%s\n\n", r.Command(), t.Stack, t.Env, strings.ReplaceAll(planview.NoChangesButDrift, "\n", " ")))
	} else {
		r.Summarize(planSummary(r.esc(), r.Command(), t, p))
	}
	r.setOutputs(Output{Name: "changes", Value: strconv.FormatBool(p.HasChanges())},
		Output{Name: "serial", Value: strconv.FormatInt(p.Serial, 10)})
}

// Deploy writes the summary, outputs and component annotations of a
// deploy or destroy under GitHub Actions, from its Outcome's Summary.
func (r *Reporter) Deploy(t deploy.Target, out *deploy.Outcome, err error) {
	if out == nil || out.Plan == nil {
		return
	}
	r.Summarize(deploySummary(r.esc(), r.Command(), t, out, err))
	outs := []Output{{Name: "changes", Value: strconv.FormatBool(out.Plan.HasChanges())}}
	if out.Head.Serial > 0 {
		outs = append(outs, Output{Name: "serial", Value: strconv.FormatInt(out.Head.Serial, 10)})
	} else {
		outs = append(outs, Output{Name: "serial", Value: strconv.FormatInt(out.Plan.Serial, 10)})
	}
	if id := out.Deployment.DeploymentID; id != "" {
		outs = append(outs, Output{Name: "deployment-id", Value: id})
	}
	r.setOutputs(outs...)
	if failed := out.Summary.Failed; len(failed) > 0 && r.Env().Actions {
		for _, res := range failed {
			r.annotate(Error, "Component "+res.Address+" failed", planview.OneLine(res.Err))
		}
		r.MarkAnnotated()
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// stackSummary is one stack's section of the job summary.
func stackSummary(esc sanitize.Masked, command, env string, r runner.StackResult) string {
	t := deploy.Target{Stack: r.Stack, Env: env}
	switch {
	case r.Outcome != nil && r.Outcome.Plan != nil:
		return deploySummary(esc, command, t, r.Outcome, r.Err) + failure(esc, r)
	case r.Plan != nil:
		return planSummary(esc, command, t, r.Plan) + failure(esc, r)
	}
	label := "Skipped"
	if r.Status != runner.StackSkipped {
		label = strings.ToUpper(string(r.Status[:1])) + string(r.Status[1:])
	}
	return fmt.Sprintf("### %s: %s/%s\n\n**%s:** %s\n\n", command, r.Stack, env, label, esc.Markdown(r.Reason))
}

func failure(esc sanitize.Masked, r runner.StackResult) string {
	if r.Status == runner.StackFailed && r.Reason != "" {
		return fmt.Sprintf("**Failed:** %s\n\n", esc.Markdown(r.Reason))
	}
	return ""
}

// Stack writes one stack's section of the job summary as it finishes, and
// annotates its failure, under GitHub Actions.
func (r *Reporter) Stack(env string, res runner.StackResult) {
	r.Summarize(stackSummary(r.esc(), r.Command(), env, res))
	if (res.Status == runner.StackFailed || res.Status == runner.StackDenied) && r.Env().Actions {
		msg := res.Reason
		if res.Err != nil {
			msg = r.hints.Remedy(res.Err)
		}
		r.annotate(Error, fmt.Sprintf("Stack %s %s", res.Stack, res.Status), msg)
	}
}

// Stacks sets the step outputs of a --all run: changes (any stack), and
// the stacks that failed.
func (r *Reporter) Stacks(results []runner.StackResult) {
	var failed []string
	for _, res := range results {
		if res.Status == runner.StackFailed {
			failed = append(failed, res.Stack)
		}
	}
	r.setOutputs(Output{Name: "changes", Value: strconv.FormatBool(planview.AnyChanges(results))},
		Output{Name: "failed-stacks", Value: strings.Join(failed, " ")})
}

// Restore writes the job summary and the serial and deployment-id step
// outputs of a restore under GitHub Actions.
func (r *Reporter) Restore(t deploy.Target, res *stateops.RestoreResult) {
	r.Summarize(fmt.Sprintf("### %s: %s/%s\n\nRestored the snapshot of serial %d as serial %d (%d resources), deployment `%s`. The infrastructure was not changed.\n\n",
		r.Command(), t.Stack, t.Env, res.RestoredFrom, res.Head.Serial, len(res.State.Resources), res.DeploymentID))
	r.setOutputs(Output{Name: "serial", Value: strconv.FormatInt(res.Head.Serial, 10)},
		Output{Name: "deployment-id", Value: res.DeploymentID})
}

func orDash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
}

// Package planview renders plans for people and for programs (the human
// tree of plan and deploy, and plan --json), and the cells every view of a
// many-stacks run shares. The terminal (internal/cli) and the GitHub job
// summary and pull request comment (internal/ghactions) render through it.
package planview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/deployer-dev/deployer/internal/jsontree"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// Renderer writes a plan for people or for programs (Terraform's
// views). Both renderers mask secrets (docs/plan.md#secrets).
type Renderer interface {
	Render(w io.Writer, p *plan.Plan) error
}

// NewHuman returns the tree renderer of `plan` and `deploy`:
//
//	user-service
//	  + api (MicroService) create
//	      + image.tag: "v1.2.3"
//	  ~ database (RDS) update
//	      ~ scaling.minReplicas: 2 -> 5
//
//	Plan: 1 to create, 1 to update, 0 to replace, 0 to delete, 3 unchanged.
//
// Components are in apply order, each under its service's name (again
// when another service's step came between); unchanged components are only
// counted; ? marks a re-evaluation (inputs may change), ~ an update. color adds ANSI colours (the CLI passes true
// only on a TTY without NO_COLOR or --no-color); false writes plain text.
// mask (a secrets.Masker's Mask; nil masks nothing) hides secrets in every
// piece of data before it is quoted or escaped (sanitize.Masked).
func NewHuman(color bool, mask func(string) string) Renderer {
	h := &humanPlan{esc: sanitize.Masked{Mask: mask}}
	if color {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.ANSI)
		h.styles = map[string]lipgloss.Style{
			"+":       r.NewStyle().Foreground(lipgloss.Color("2")),
			"~":       r.NewStyle().Foreground(lipgloss.Color("3")),
			"-":       r.NewStyle().Foreground(lipgloss.Color("1")),
			"?":       r.NewStyle().Foreground(lipgloss.Color("6")),
			"±":       r.NewStyle().Foreground(lipgloss.Color("5")),
			"=":       r.NewStyle().Foreground(lipgloss.Color("4")),
			"service": r.NewStyle().Bold(true),
			"forces":  r.NewStyle().Foreground(lipgloss.Color("1")),
			"summary": r.NewStyle().Bold(true),
		}
	}
	return h
}

type humanPlan struct {
	styles map[string]lipgloss.Style // nil: no colour
	esc    sanitize.Masked
}

func (h *humanPlan) style(name, s string) string {
	if h.styles == nil {
		return s
	}
	return h.styles[name].Render(s)
}

var actionMarker = map[plan.Action]string{plan.Create: "+", plan.Update: "~", plan.Replace: "±", plan.Delete: "-", plan.Import: "="}

// Marker is the sign of an action in every view: + create, ~ update,
// ± replace, - delete, = import.
func Marker(a plan.Action) string { return actionMarker[a] }

// ReevaluateMarker is the sign of a re-evaluated no-op, a step whose
// inputs may change (docs/plan.md#actions): not ~, which is an update
// that will run.
const ReevaluateMarker = "?"

var opMarker = map[string]string{plan.OpAdd: "+", plan.OpChange: "~", plan.OpRemove: "-"}

func (h *humanPlan) Render(w io.Writer, p *plan.Plan) error {
	bw := bufio.NewWriter(w)
	if !p.HasChanges() {
		fmt.Fprintln(bw, "No changes. Infrastructure matches the configuration.")
		h.policySection(bw, p.Policy)
		return bw.Flush()
	}
	unchanged, svc := 0, "\x00"
	for _, s := range p.Steps {
		if !s.Changes() {
			unchanged++
			continue
		}
		if s.Service != svc { // apply order: a service's header again when another's step came between
			svc = s.Service
			fmt.Fprintln(bw, h.style("service", h.esc.Line(svc)))
		}
		h.step(bw, s)
	}
	sum := p.Summary
	reeval := ImportCount(sum)
	if sum.Reevaluate > 0 {
		reeval = fmt.Sprintf(", %d to re-evaluate", sum.Reevaluate)
	}
	if sum.Move > 0 {
		reeval += fmt.Sprintf(", %d to move", sum.Move)
	}
	fmt.Fprintf(bw, "\n%s %d to create, %d to update, %d to replace, %d to delete%s, %d unchanged.\n",
		h.style("summary", "Plan:"), sum.Create, sum.Update, sum.Replace, sum.Delete, reeval, unchanged)
	h.outputsSection(bw, p.Outputs)
	if len(p.OutOfScope) > 0 {
		fmt.Fprintf(bw, "\nOutside %s, these components take inputs from this plan's changes; they are not applied without their own lock:\n",
			h.esc.Line(scopeFlags(p.Scope)))
		for _, d := range p.OutOfScope {
			fmt.Fprintf(bw, "  %s %s: inputs from %s may change\n", h.style(ReevaluateMarker, ReevaluateMarker), h.esc.Line(d.Address), h.esc.Line(strings.Join(d.InputsFrom, ", ")))
		}
		fmt.Fprintf(bw, "Apply them afterwards with: deployer deploy -s %s -e %s\n", h.esc.Line(p.Stack), h.esc.Line(p.Environment))
	}
	h.policySection(bw, p.Policy)
	return bw.Flush()
}

// step writes one step with changes: its marker line, then its diffs and
// notes.
func (h *humanPlan) step(bw io.Writer, s plan.Step) {
	if s.MovedFrom != "" {
		fmt.Fprintf(bw, "  %s %s -> %s %s\n", h.style("~", ">"), h.esc.Line(s.MovedFrom), h.esc.Line(s.Address), h.style("~", "(moved)"))
		if s.Action == plan.NoOp && !s.Reevaluate {
			return
		}
	}
	if s.Action == plan.NoOp { // re-evaluated: "known after apply"
		fmt.Fprintf(bw, "  %s %s (%s) %s\n", h.style(ReevaluateMarker, ReevaluateMarker), h.esc.Line(s.Component), h.esc.Line(s.Kind),
			h.style(ReevaluateMarker, "inputs from "+h.esc.Line(strings.Join(s.InputsFrom, ", "))+" may change"))
		return
	}
	m := actionMarker[s.Action]
	fmt.Fprintf(bw, "  %s %s (%s) %s%s\n", h.style(m, m), h.esc.Line(s.Component), h.esc.Line(s.Kind), h.style(m, string(s.Action)), ImportNote(s, h.esc))
	for _, f := range s.Diffs {
		h.field(bw, MaskDiff(f))
	}
	for _, f := range s.Drift { // masked by the use case
		fmt.Fprintf(bw, "      read now, recorded as live: %s: %s -> %s\n", h.esc.Line(f.Path), h.esc.Line(fmt.Sprint(f.Old)), h.esc.Line(fmt.Sprint(f.New)))
	}
	if line := DeletedByLine(s, h.esc.Line); line != "" {
		fmt.Fprintf(bw, "      %s\n", line)
	}
	if line := runsLine(s, h.esc); line != "" {
		fmt.Fprintf(bw, "      %s\n", line)
	}
}

// ImportNote is what an Import step's line adds after the action: the id
// it adopts (` (id "i-0abc")`), masked, quoted and escaped by esc; "" on
// every other step.
func ImportNote(s plan.Step, esc sanitize.Masked) string {
	if s.Action != plan.Import {
		return ""
	}
	return " (id " + sanitize.Line(strconv.Quote(esc.Raw(s.ImportID))) + ")"
}

// ImportCount is what a plan's summary line adds after its deletes when
// it imports (", 1 to import"); "" when it imports nothing.
func ImportCount(sum plan.Summary) string {
	if sum.Import == 0 {
		return ""
	}
	return fmt.Sprintf(", %d to import", sum.Import)
}

// DeletedByLine says, on a replace across engines (plan.Step.DeletedBy),
// which engine deletes the existing instance before the new one is
// created, through escape (a sanitize.Masked method: Line for a terminal,
// Markdown for a table cell); "" otherwise.
func DeletedByLine(s plan.Step, escape func(string) string) string {
	if s.DeletedBy == "" {
		return ""
	}
	old := "instance"
	for _, f := range s.Diffs {
		if f.Path == plan.PathKind {
			old = fmt.Sprint(f.Old)
		}
	}
	return escape(fmt.Sprintf("the %s engine deletes the existing %s first, then the new %s is created", s.DeletedBy, old, s.Kind))
}

// runsLine says what a delete step runs (plan.Step.Runs): "runs: CMD", or
// that nothing runs; for a replace, what the delete of the existing
// instance runs ("delete runs: CMD"); "" when the step has no commands.
// CMD keeps its lines, masked and passed through sanitize.Text.
func runsLine(s plan.Step, esc sanitize.Masked) string {
	switch {
	case s.Runs == nil:
		return ""
	case s.Action == plan.Replace && *s.Runs == "":
		return "delete runs nothing (no delete command): the new instance is created"
	case s.Action == plan.Replace:
		return "delete runs: " + strings.ReplaceAll(esc.Text(*s.Runs), "\n", "\n                   ")
	case *s.Runs == "":
		return "runs nothing (no delete command): only removed from the state"
	}
	return "runs: " + strings.ReplaceAll(esc.Text(*s.Runs), "\n", "\n            ")
}

func scopeFlags(scope string) string {
	targets, exclude := plan.ScopeTerms(scope)
	var b strings.Builder
	for _, t := range targets {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if strings.Contains(t, "/") {
			b.WriteString("--component " + t)
		} else {
			b.WriteString("--service " + t)
		}
	}
	for _, e := range exclude {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("--exclude " + e)
	}
	return b.String()
}

// outputsSection writes the changes to the stack's outputs
// (docs/operations.md#stack-outputs), one line per output, masked.
func (h *humanPlan) outputsSection(w io.Writer, diffs []plan.FieldDiff) {
	if len(diffs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nChanges to Outputs:")
	for _, f := range diffs {
		f = MaskDiff(f)
		m := opMarker[f.Op]
		show := func(v any) string {
			if v == plan.KnownAfterApply {
				return plan.KnownAfterApply
			}
			return FormatValue(v, f.Sensitive, h.esc.Mask)
		}
		var val string
		switch f.Op {
		case plan.OpAdd:
			val = show(f.New)
		case plan.OpRemove:
			val = show(f.Old)
		default:
			val = show(f.Old) + " -> " + show(f.New)
		}
		fmt.Fprintf(w, "  %s %s = %s\n", h.style(m, m), h.esc.Line(f.Path), sanitize.Line(val))
	}
}

func (h *humanPlan) field(w io.Writer, f plan.FieldDiff) {
	m := opMarker[f.Op]
	var val string
	switch f.Op {
	case plan.OpAdd:
		val = FormatValue(f.New, f.Sensitive, h.esc.Mask)
	case plan.OpRemove:
		val = FormatValue(f.Old, f.Sensitive, h.esc.Mask)
	default:
		val = FormatValue(f.Old, f.Sensitive, h.esc.Mask) + " -> " + FormatValue(f.New, f.Sensitive, h.esc.Mask)
	}
	line := fmt.Sprintf("      %s %s: %s", h.style(m, m), h.esc.Line(f.Path), sanitize.Line(val))
	if f.ForcesReplacement {
		line += "  " + h.style("forces", "# forces replacement")
	}
	fmt.Fprintln(w, line)
}

// FormatValue renders a diff value: strings quoted, numbers and booleans as
// written, maps and lists as compact JSON, masked values as (sensitive).
// mask (nil masks nothing) hides secrets in every string and number of v
// before it is quoted, and in the JSON after.
func FormatValue(v any, sensitive bool, mask func(string) string) string {
	esc := sanitize.Masked{Mask: mask}
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		if sensitive && t == plan.Masked {
			return plan.Masked
		}
		return strconv.Quote(esc.Raw(t))
	case json.Number:
		return esc.Raw(t.String())
	}
	b, err := json.Marshal(jsontree.MapStrings(v, esc.Raw))
	if err != nil {
		return esc.Raw(fmt.Sprint(v))
	}
	return esc.Raw(string(b))
}

// MaskDiff masks a diff again before output (plan.MaskDiff): plan.Build
// already did, but a renderer must never print a secret whatever built its plan.
func MaskDiff(f plan.FieldDiff) plan.FieldDiff { return plan.MaskDiff(f) }

// NewJSON returns the renderer of `plan --json`: the Plan as
// indented JSON (schema "deployer-plan-v1", docs/plan.md), diffs masked.
func NewJSON() Renderer { return jsonPlan{} }

type jsonPlan struct{}

func (jsonPlan) Render(w io.Writer, p *plan.Plan) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p.Document()); err != nil {
		return fmt.Errorf("write plan JSON: %w", err)
	}
	_, err := w.Write(sanitize.JSON(b.Bytes())) // a saved plan is foreign data
	return err
}

// policySection writes the "Policy" section under a plan: one line per
// policy that denies, is overridden or warns, with its messages, then the
// ones that pass (docs/policy.md#where-policies-apply). Nothing when r is nil.
func (h *humanPlan) policySection(w io.Writer, r *policy.Report) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "\n%s %d policies (%s)\n", h.style("summary", "Policy:"), len(r.Results), h.esc.Line(r.Digest))
	var passed []string
	for _, x := range r.Results {
		switch x.Status() {
		case policy.StatusPass:
			passed = append(passed, h.esc.Line(x.Policy))
			continue
		case policy.StatusDeny:
			note := ""
			if !x.Overridable {
				note = " (not overridable)"
			}
			fmt.Fprintf(w, "  %s %s: deny%s\n", h.style("-", "x"), h.esc.Line(x.Policy), note)
		case policy.StatusOverridden:
			by := h.esc.Line(x.Override.By)
			if !x.Override.Verified {
				by += " (not verified)" // docs/policy.md#overrides
			}
			fmt.Fprintf(w, "  %s %s: overridden by %s: %s\n", h.style("~", "!"), h.esc.Line(x.Policy), by, h.esc.Line(x.Override.Reason))
		case policy.StatusWarn:
			fmt.Fprintf(w, "  %s %s: warn\n", h.style("~", "!"), h.esc.Line(x.Policy))
		}
		for _, m := range x.Deny {
			fmt.Fprintf(w, "      %s\n", h.esc.Line(m))
		}
		for _, m := range x.Warn {
			fmt.Fprintf(w, "      warn: %s\n", h.esc.Line(m))
		}
	}
	if len(passed) > 0 {
		fmt.Fprintf(w, "  %s pass: %s\n", h.style("+", "+"), strings.Join(passed, ", "))
	}
}

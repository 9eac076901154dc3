package termui

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// RenderDrift prints plan --refresh's drift report (stderr in --json mode,
// so stdout stays the plan document); the use case masked its secrets.
func RenderDrift(ios *IOStreams, drift []engine.Drift, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(ios.ErrOut)
		return enc.Encode(map[string]any{"drift": drift})
	}
	w := ios.Out
	if len(drift) == 0 {
		fmt.Fprintln(w, "No drift: what is live matches actual_state.")
		return nil
	}
	fmt.Fprintf(w, "Drift between actual_state and what is live (%d components):\n", len(drift))
	writeDriftList(w, drift, "  ! %s\n", "  ! %s: its resources no longer exist\n")
	fmt.Fprintln(w)
	return nil
}

// writeDriftList prints each drifted component on a line of its own,
// worded by changed or, when its resources are gone, by missing (format
// strings taking the address), with the fields that differ below it as
// "path: old -> new". The values are printed as the use case masked them.
func writeDriftList(w io.Writer, drift []engine.Drift, changed, missing string) {
	for _, d := range drift {
		if d.Missing {
			fmt.Fprintf(w, missing, sanitize.Line(d.Address))
			continue
		}
		fmt.Fprintf(w, changed, sanitize.Line(d.Address))
		for _, fd := range d.Fields { // live data, read from the engines
			fmt.Fprintf(w, "      %s: %s -> %s\n", sanitize.Line(fd.Path), sanitize.Line(fmt.Sprint(fd.Old)), sanitize.Line(fmt.Sprint(fd.New)))
		}
	}
}

// PlanRenderer is the renderer of a plan: JSON with asJSON, else the human
// tree, coloured when stdout takes colour, with the session's mask.
func PlanRenderer(ios *IOStreams, asJSON bool) planview.Renderer {
	if asJSON {
		return planview.NewJSON()
	}
	return planview.NewHuman(ios.ColorOut(), ios.Mask)
}

// RenderRefreshPlan prints what a refresh-only found: the drift as
// changes to the state (values masked by the use case), the components it
// could not read, and "No changes." when what is live matches the state.
func RenderRefreshPlan(w io.Writer, p *deploy.RefreshPlan) {
	if len(p.Drift) > 0 {
		n := fmt.Sprintf("%d components", len(p.Drift))
		if len(p.Drift) == 1 {
			n = "1 component"
		}
		fmt.Fprintf(w, "Refresh-only: what is live differs from the state of %s/%s (%s); recording it changes only the state:\n",
			p.Stack, p.Environment, n)
		writeDriftList(w, p.Drift, "  ~ %s: changed outside deployer\n",
			"  - %s: gone (no longer exists); recording removes it from the state, running no delete\n")
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintf(w, "Skipped (cannot be read, left as recorded): %s\n", strings.Join(p.Skipped, ", "))
	}
	if len(p.Drift) == 0 {
		fmt.Fprintln(w, "No changes. What is live matches the state.")
	}
	if p.Pending {
		fmt.Fprintf(w, "deployer.yaml has changes a refresh-only leaves alone: deployer plan -e %s shows them.\n", p.Environment)
	}
}

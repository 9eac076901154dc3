package pulumi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// importGuard keeps an up that imports from changing what it adopts
// (docs/pulumi.md#import): when a step of steps declares its resource with
// Pulumi's import option, it first runs a preview of the same program and
// returns an *ImportDiffError when Pulumi would do anything to an imported
// resource beyond importing it (an update in place of a field that differs
// from the config, a replace, a delete). The plan showed an import only,
// and nothing has touched the cloud yet. A preview that fails refuses the
// import too, with Pulumi's error as it writes it (an id that names
// nothing): what the up would do to the resource is then unknown, so the
// up does not run. Applies without an import run no preview.
func (e *Engine) importGuard(ctx context.Context, in engine.Inputs, comps []Component, steps []plan.Step) error {
	var imports []plan.Step
	for _, s := range steps {
		if s.Action != plan.Delete && importOf(s) != "" {
			imports = append(imports, s)
		}
	}
	if len(imports) == 0 {
		return nil
	}
	ev := watchEvents()
	if _, err := e.preview(ctx, in, comps, optpreview.EventStreams(ev.ch)); err != nil {
		return fmt.Errorf("%w; nothing was changed", err)
	}
	return importDiffs(imports, ev.wait().steps)
}

// importDiffs returns the *ImportDiffError of each import step whose
// resource the previewed steps do more to than import (or keep the same),
// joined; nil when none does.
func importDiffs(imports []plan.Step, previewed []apitype.StepEventMetadata) error {
	var errs []error
	for _, s := range imports {
		o := ownerOfStep(s)
		d := &ImportDiffError{Address: s.Address, ID: importOf(s)}
		for _, m := range previewed {
			if m.Op == apitype.OpImport || m.Op == apitype.OpSame || !o.holds(stepResource(m)) {
				continue
			}
			if op := opWord(m.Op); !slices.Contains(d.Ops, op) {
				d.Ops = append(d.Ops, op)
			}
			for _, k := range m.Diffs {
				if !slices.Contains(d.Fields, k) {
					d.Fields = append(d.Fields, k)
				}
			}
		}
		if len(d.Ops) > 0 {
			slices.Sort(d.Fields)
			errs = append(errs, d)
		}
	}
	return errors.Join(errs...)
}

// opWord is what step op does to a resource, in the words of a plan:
// every step of a replacement is "replace".
func opWord(op apitype.OpType) string {
	switch op {
	case apitype.OpReplace, apitype.OpCreateReplacement, apitype.OpDeleteReplaced, apitype.OpImportReplacement, apitype.OpDiscardReplaced:
		return "replace"
	}
	return string(op)
}

// stepResource is the resource a step event is about, as the state would
// list it (URN, type, parent), for owner.holds.
func stepResource(m apitype.StepEventMetadata) snapResource {
	r := snapResource{URN: m.URN, Type: m.Type}
	for _, st := range []*apitype.StepEventStateMetadata{m.New, m.Old} {
		if st != nil && st.Parent != "" {
			r.Parent = st.Parent
			break
		}
	}
	return r
}

// ImportDiffError: the live resource a component imports differs from its
// config in what Pulumi would change after importing it (Ops: "update",
// "replace", ...; Fields: the preview's diff keys, names only, never
// values), so the deploy stopped before Pulumi ran it
// (docs/pulumi.md#import).
type ImportDiffError struct {
	Address, ID string
	Ops, Fields []string
}

func (e *ImportDiffError) Error() string {
	what := "differs from the config"
	if len(e.Fields) > 0 {
		what += " in " + strings.Join(e.Fields, ", ")
	}
	return fmt.Sprintf("%s: the live resource %q %s: Pulumi would import it, then %s it, which the plan does not show; nothing was changed: "+
		"make the config match the live resource, then deploy again", e.Address, e.ID, what, strings.Join(e.Ops, ", "))
}

package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/stacks"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/termui"
)

// DeclinedError is a destroy not confirmed: the answer was neither "yes"
// nor the stack's name (docs/commands.md, deploy destroy). It is
// deploy.ErrDeclined to errors.Is.
type DeclinedError struct {
	Name string // the stack name that also confirms ("" for --all)
}

func (e *DeclinedError) Error() string {
	accept := "yes"
	if e.Name != "" {
		accept += " or " + e.Name
	}
	return "destroy cancelled: nothing was deleted (only " + accept + ", typed in full, confirms a destroy)"
}

// Is makes a declined destroy errors.Is(err, deploy.ErrDeclined).
func (e *DeclinedError) Is(target error) bool { return target == deploy.ErrDeclined }

// ConfirmDestroy asks question and takes only "yes" or name as the answer;
// any other is a *DeclinedError.
func ConfirmDestroy(io *termui.IOStreams, question, name string) (bool, error) {
	ok, err := io.ConfirmTyped(question, name)
	if err == nil && !ok {
		return false, &DeclinedError{Name: name}
	}
	return ok, err
}

// confirm asks once before deploy or destroy --all without --yes and
// returns the ShowPlan of the run. Destroy first shows each stack's plan
// (what it deletes) and takes only "yes"; deploy lists the stacks.
func (a *allRunner) confirm(ctx context.Context, r AllRequest, sel *runner.Selection, v *allView) (func(*stacks.Stack, *plan.Plan) error, error) {
	if !a.io.CanPrompt() {
		return nil, &exitcode.UsageError{Msg: fmt.Sprintf("%s --all needs confirmation but there is no terminal to ask on: pass --yes to proceed", r.Op)}
	}
	order := sel.Order(r.Op)
	fmt.Fprintf(a.io.ErrOut, "Stacks to %s in %s, in this order: %s\n", r.Op, r.Env, strings.Join(order, ", "))
	if r.Op != runner.OpDestroy {
		ok, err := a.io.Confirm(fmt.Sprintf("Deploy %d stacks?", len(order)))
		if err == nil && !ok {
			err = deploy.ErrDeclined
		}
		return v.showPlan, err
	}
	plans, n, err := a.previewDestroy(ctx, r, sel, v)
	if err != nil {
		return nil, err
	}
	if n == 0 { // as terraform destroy: nothing to ask about
		fmt.Fprintf(a.io.ErrOut, "Nothing to destroy: no stack has components in the state of %s.\n", r.Env)
		return confirmed(plans), nil
	}
	from := fmt.Sprintf("%d stacks", n)
	if n == 1 {
		from = "1 stack"
	}
	_, err = ConfirmDestroy(a.io, fmt.Sprintf("Destroy these components from %s in %s?", from, r.Env), "")
	return confirmed(plans), err
}

// previewDestroy plans the destroy of each stack of sel in the order
// destroy --all runs them, without locking, and shows each plan that
// deletes something, as plan --all shows plans. It returns the plans by
// stack and how many stacks have something to delete.
func (a *allRunner) previewDestroy(ctx context.Context, r AllRequest, sel *runner.Selection, v *allView) (map[string]*plan.Plan, int, error) {
	plans, n := map[string]*plan.Plan{}, 0
	w := a.io.Out
	if r.JSON { // stdout is the run's JSON lines
		w = a.io.ErrOut
	}
	for _, name := range sel.Order(runner.OpDestroy) {
		st := sel.Set.Get(name)
		if !st.InEnv {
			continue
		}
		svc, err := a.open(ctx, st.Config, ServiceOptions{EngineOptions: EngineOptions{InstallPulumi: r.InstallPulumi}, ReadOnly: true, Stack: true})
		if err != nil {
			return nil, 0, fmt.Errorf("stack %s: %w", name, err)
		}
		p, err := svc.Plan(ctx, deploy.PlanRequest{Config: st.Config, Target: deploy.Target{Stack: name, Env: r.Env}, Destroy: true})
		if err != nil {
			return nil, 0, fmt.Errorf("stack %s: %w", name, err)
		}
		plans[name] = p
		if p.HasChanges() {
			n++
			if err := v.render(w, st, p); err != nil {
				return nil, 0, err
			}
		}
	}
	return plans, n, nil
}

// confirmed is the ShowPlan of a destroy --all whose plans were shown
// before the prompt: a stack's plan under its lock is not shown again,
// and a stack whose state moved on since (another serial) is refused, as
// what was confirmed is no longer what would be deleted.
func confirmed(plans map[string]*plan.Plan) func(st *stacks.Stack, p *plan.Plan) error {
	return func(st *stacks.Stack, p *plan.Plan) error {
		shown := plans[st.Name]
		if shown == nil || shown.Lineage != p.Lineage || shown.Serial != p.Serial {
			return fmt.Errorf("the state of %s changed since the prompt (serial %d, now %d): nothing of it was deleted; run destroy --all again to see what it deletes now", st.Name, serialOf(shown), p.Serial)
		}
		return nil
	}
}

func serialOf(p *plan.Plan) int64 {
	if p == nil {
		return 0
	}
	return p.Serial
}

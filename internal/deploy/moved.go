package deploy

import (
	"context"
	"fmt"
	"slices"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// loadMoved loads the state of pr's target as its plan sees it: its
// checksums verified (loadOrNew) and the moved: entries applied
// (movedState). Errors: loadOrNew's and movedState's.
func (s *Service) loadMoved(ctx context.Context, pr *prepared) (loaded, error) {
	st, head, err := s.c.LoadOrNew(ctx, pr.t)
	if err != nil {
		return loaded{}, err
	}
	return movedLoaded(st, head, pr)
}

// loadMovedFrom is loadMoved of a document already read (readState; nil:
// no state yet): verified (statestore.Store.Verify), not read again.
func (s *Service) loadMovedFrom(ctx context.Context, pr *prepared, doc *statestore.Doc) (loaded, error) {
	if doc == nil {
		return movedLoaded(statestore.NewState(pr.t.Stack, pr.t.Env), statestore.Head{}, pr)
	}
	st, head, err := s.c.Store.Verify(ctx, pr.t.Stack, pr.t.Env, *doc)
	if err != nil {
		return loaded{}, err
	}
	return movedLoaded(st, head, pr)
}

// loaded is a target's state as its plan sees it, with the Head it was
// read at and the moves applied to it.
type loaded struct {
	st    *statestore.State
	head  statestore.Head
	moves []plan.Move
}

func movedLoaded(st *statestore.State, head statestore.Head, pr *prepared) (loaded, error) {
	st, moves, err := movedState(st, pr.res, pr.t)
	return loaded{st: st, head: head, moves: moves}, err
}

// movedState applies the moved: entries of res to st (plan.ApplyMoves)
// for a plan of target t: the plan is then made, and the state saved,
// with the entries at their new addresses (docs/operations.md#moves). A
// move is applied by a plan of the whole stack only; a scoped plan that a
// pending move touches (its from or to in scope, or a component in scope
// depending on its to, which the unmoved state lacks) is refused with a
// *TargetError, and one it does not touch leaves the moves for later.
func movedState(st *statestore.State, res *config.Resolved, t Target) (*statestore.State, []plan.Move, error) {
	moved, moves, err := plan.ApplyMoves(st, res.Moves)
	if err != nil || len(moves) == 0 {
		return moved, moves, err
	}
	scope := t.Scope()
	if scope == "" {
		return moved, moves, nil
	}
	for _, m := range moves {
		if plan.InScope(m.From, scope) || plan.InScope(m.To, scope) || dependedOnInScope(res, m.To, scope) {
			return nil, nil, &TargetError{Msg: fmt.Sprintf("moved: %s -> %s is not applied yet and a scoped plan does not apply moves: "+
				"plan and deploy the whole stack once (without --service, --component or --exclude)", m.From, m.To)}
		}
	}
	return st, nil, nil
}

// dependedOnInScope reports whether a component of res in scope depends on addr.
func dependedOnInScope(res *config.Resolved, addr, scope string) bool {
	for a, c := range res.Components {
		if plan.InScope(a, scope) && slices.Contains(c.DependsOn, addr) {
			return true
		}
	}
	return false
}

// movedLines are the moves of p as history records them ("FROM -> TO").
func movedLines(p *plan.Plan) []string {
	var out []string
	for _, s := range p.Steps {
		if s.MovedFrom != "" {
			out = append(out, s.MovedFrom+" -> "+s.Address)
		}
	}
	return out
}

package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// loadMoved loads the state of pr's target as its plan sees it: its
// checksums verified (loadOrNew) and the moved: entries applied
// (movedState). Errors: loadOrNew's and movedState's.
func (s *Service) loadMoved(ctx context.Context, pr *prepared) (loaded, error) {
	st, head, err := s.loadOrNew(ctx, pr.t)
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
	st, head, err := s.d.Store.Verify(ctx, pr.t.Stack, pr.t.Env, *doc)
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

// StateMoveRequest is one `deployer state mv FROM TO`.
type StateMoveRequest struct {
	Target      Target // stack and environment only
	From, To    string // "svc/comp" each, or "svc" each for a whole service
	LockTimeout time.Duration
	Dir         string // deployer.yaml's directory, for git info
	// Config is deployer.yaml, to tell which destinations it does not
	// declare (StateMoveResult.Undeclared); nil checks none.
	Config *config.Config
}

// StateMoveResult is what StateMove wrote.
type StateMoveResult struct {
	Head  statestore.Head
	Moves []plan.Move // the component entries moved, in order
	// Undeclared are the addresses moved to that Request.Config does not
	// declare: the move is done, and the next deploy deletes them unless
	// deployer.yaml declares them by then (docs/operations.md#state-mv).
	Undeclared []string
}

// ErrNothingToMove: state mv FROM names nothing in the state.
var ErrNothingToMove = errors.New("nothing to move")

// StateMove moves state entries from one address to another under the
// stack lock, running nothing (docs/operations.md#state-mv): as a moved:
// entry does, the entries keep everything and the dependents' recorded
// inputs follow. It writes a new serial with a deployment record of type
// state-mv. Errors: ErrNothingToMove (wrapped, naming the addresses in
// the state), *plan.MoveError when TO is taken, *lockmgr.HeldError,
// *statestore.ChecksumError or ConflictError.
func (s *Service) StateMove(ctx context.Context, req StateMoveRequest) (res *StateMoveResult, err error) {
	t := Target{Stack: req.Target.Stack, Env: req.Target.Env}
	m := config.Move{From: req.From, To: req.To}
	if strings.Contains(m.From, "/") != strings.Contains(m.To, "/") {
		return nil, &TargetError{Msg: fmt.Sprintf("%s and %s must both be components (SERVICE/NAME) or both services (SERVICE)", m.From, m.To)}
	}
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	depID := NewDeploymentID()
	commit, branch := s.gitInfo(req.Dir)
	lease, err := s.lease(ctx, leaseRequest{Key: t.LockKey(), Op: lockmgr.OpStateMove, DeploymentID: depID,
		GitCommit: commit, GitBranch: branch, Timeout: req.LockTimeout})
	if err != nil {
		return nil, err
	}
	defer lease.ReleaseInto(&err)
	st, head, err := s.d.Store.Load(lease.Context(), t.Stack, t.Env)
	if err != nil {
		return nil, err
	}
	moved, moves, err := plan.ApplyMoves(st, []config.Move{m})
	if err != nil {
		return nil, err
	}
	if len(moves) == 0 {
		return nil, fmt.Errorf("%w: %s is not in the state of %s/%s (deployer state list prints what it holds)", ErrNothingToMove, m.From, t.Stack, t.Env)
	}
	now := s.d.Now().UTC()
	dep := statestore.Deployment{DeploymentID: depID, Type: "state-mv", Timestamp: now, TriggeredBy: lease.By, GitCommit: commit,
		Status: statestore.DeploymentSuccess, Scope: t.LockKey()}
	for _, mv := range moves {
		dep.Moved = append(dep.Moved, mv.From+" -> "+mv.To)
	}
	next := cloneState(moved)
	changeSet{}.apply(next, dep, lease.Record(), lease.By, commit, branch, now)
	newHead, err := s.d.Store.Save(lease.Context(), next, head, leaseRef(lease))
	if err != nil {
		return nil, err
	}
	s.d.Audit.Info("state.moved", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial, "from", m.From, "to", m.To,
		"deployment_id", depID, "lock_id", lease.Record().LockID)
	res = &StateMoveResult{Head: newHead, Moves: moves}
	if req.Config != nil {
		for _, mv := range moves {
			svc, name := config.SplitAddress(mv.To)
			if sc := req.Config.Services[svc]; sc == nil || sc.Components[name] == nil {
				res.Undeclared = append(res.Undeclared, mv.To)
			}
		}
	}
	return res, nil
}

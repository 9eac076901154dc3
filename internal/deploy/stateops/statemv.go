package stateops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// StateMoveRequest is one `deployer state mv FROM TO`.
type StateMoveRequest struct {
	Target      core.Target // stack and environment only
	From, To    string      // "svc/comp" each, or "svc" each for a whole service
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
func (s *Ops) StateMove(ctx context.Context, req StateMoveRequest) (res *StateMoveResult, err error) {
	t := core.Target{Stack: req.Target.Stack, Env: req.Target.Env}
	m := config.Move{From: req.From, To: req.To}
	if strings.Contains(m.From, "/") != strings.Contains(m.To, "/") {
		return nil, &core.TargetError{Msg: fmt.Sprintf("%s and %s must both be components (SERVICE/NAME) or both services (SERVICE)", m.From, m.To)}
	}
	if err := s.c.Open(ctx); err != nil {
		return nil, err
	}
	depID, commit, branch, lease, err := s.leaseRun(ctx, t, lockmgr.OpStateMove, req.Dir, req.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer lease.ReleaseInto(&err)
	st, head, err := s.c.Store.Load(lease.Context(), t.Stack, t.Env)
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
	now := s.c.Now().UTC()
	dep := statestore.Deployment{DeploymentID: depID, Type: "state-mv", Timestamp: now, TriggeredBy: lease.By, GitCommit: commit,
		Status: statestore.DeploymentSuccess, Scope: t.LockKey()}
	for _, mv := range moves {
		dep.Moved = append(dep.Moved, mv.From+" -> "+mv.To)
	}
	next := core.CloneState(moved)
	core.ChangeSet{}.Apply(next, dep, lease.Record(), lease.By, commit, branch, now)
	newHead, err := s.c.Store.Save(lease.Context(), next, head, core.LeaseRef(lease))
	if err != nil {
		return nil, err
	}
	s.c.Audit.Info("state.moved", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial, "from", m.From, "to", m.To,
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

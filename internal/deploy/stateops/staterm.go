package stateops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// StateRmRequest is one `deployer state rm ADDR...` (docs/operations.md).
type StateRmRequest struct {
	Target      core.Target
	Addresses   []string // "service/component" each, in the state
	LockTimeout time.Duration
}

// StateRm removes components from the state without running their delete,
// under the stack lock, as a new serial whose history record (type
// state-rm) names who removed what. The instances stay where they are; a
// component still in deployer.yaml is created again by the next deploy.
// Errors: an address not in the state (nothing written), no state, the
// lock's and the state store's.
func (s *Ops) StateRm(ctx context.Context, req StateRmRequest) (_ statestore.Head, err error) {
	if err := s.c.Open(ctx); err != nil {
		return statestore.Head{}, err
	}
	t := req.Target
	id := core.NewDeploymentID()
	lease, err := s.c.Lease(ctx, lockmgr.LeaseRequest{Key: lockmgr.StackKey(t.Stack, t.Env), Op: lockmgr.OpStateRm, DeploymentID: id, Timeout: req.LockTimeout})
	if err != nil {
		return statestore.Head{}, err
	}
	defer lease.ReleaseInto(&err)
	st, head, err := s.c.Store.Load(lease.Context(), t.Stack, t.Env)
	if errors.Is(err, statestore.ErrNotFound) {
		return statestore.Head{}, fmt.Errorf("%s/%s has no state (nothing at %s): nothing to remove", t.Stack, t.Env, s.c.Store.Location(t.Stack, t.Env))
	}
	if err != nil {
		return statestore.Head{}, err
	}
	cs := core.ChangeSet{Changes: executor.Changes{Resources: map[string]*statestore.Resource{}}}
	for _, addr := range req.Addresses {
		if st.Resources[addr] == nil {
			return statestore.Head{}, fmt.Errorf("%s is not in the state of %s/%s (it holds: %s); nothing was removed",
				addr, t.Stack, t.Env, cmp.Or(strings.Join(slices.Sorted(maps.Keys(st.Resources)), ", "), "none"))
		}
		if _, dup := cs.Resources[addr]; !dup {
			cs.Resources[addr] = nil
			cs.Counts.Deleted++
		}
	}
	now := s.c.Now().UTC()
	removed := slices.Sorted(maps.Keys(cs.Resources))
	dep := statestore.Deployment{DeploymentID: id, Type: string(lockmgr.OpStateRm), Timestamp: now, TriggeredBy: lease.By,
		Status: statestore.DeploymentSuccess, ResourcesChanged: cs.Counts, Scope: lease.Record().LockKey, Removed: removed}
	commit, branch := s.c.GitInfo(s.c.Dir)
	cs.Apply(st, dep, lease.Record(), lease.By, commit, branch, now)
	newHead, err := s.c.Store.Save(lease.Context(), st, head, core.LeaseRef(lease))
	if err != nil {
		return newHead, err
	}
	s.c.Audit.Info("state.removed", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial,
		"removed", strings.Join(removed, ","), "by", lease.By, "lock_id", lease.Record().LockID)
	return newHead, nil
}

package stateops

import (
	"context"
	"fmt"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// BrokenRequest names a lock unlock --force just broke: its record and the
// target whose lock it was.
type BrokenRequest struct {
	Target core.Target
	Lock   lockmgr.Record
}

// RecordBroken records the deployment whose lock unlock --force just broke
// (req.Lock) as abandoned: it takes the lock of req.Target itself (no wait), writes the
// entry and releases. Locks of lock exec and records without a deployment
// are left alone. When someone else took the lock first, that holder's
// deploy does not see the broken record, so the entry is not written and
// the returned error says so.
func (s *Ops) RecordBroken(ctx context.Context, req BrokenRequest) (err error) {
	t, rec := req.Target, req.Lock
	if rec.Metadata.DeploymentID == "" {
		return nil
	}
	if op := rec.Metadata.Operation; op != "" && op != lockmgr.OpDeploy && op != lockmgr.OpDestroy {
		return nil
	}
	if err := s.c.Open(ctx); err != nil {
		return fmt.Errorf("deployment %s was not recorded as abandoned: %w", rec.Metadata.DeploymentID, err)
	}
	lease, err := s.c.Lease(ctx, lockmgr.LeaseRequest{Key: t.LockKey(), Op: lockmgr.OpUnlock})
	if err != nil {
		return fmt.Errorf("deployment %s was not recorded as abandoned: %w", rec.Metadata.DeploymentID, err)
	}
	defer lease.ReleaseInto(&err)
	return s.c.WriteAbandoned(lease.Context(), lease, t, []lockmgr.Record{rec}, "broken with unlock --force")
}

package core

import (
	"context"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Lease takes a lease for a use case through the one
// lease site (lockmgr.Manager.Take), naming the holder from the core's
// environment and reporting on its progress stream.
func (c *Core) Lease(ctx context.Context, req lockmgr.LeaseRequest) (*lockmgr.Holding, error) {
	req.Getenv, req.Progress = c.Getenv, c.Progress
	return c.Locks.Take(ctx, req)
}

// LeaseRef is the lease as a state write checks and records it (the key,
// lock id and fence).
func LeaseRef(l *lockmgr.Holding) *statestore.LockRef {
	rec := l.Record()
	return &statestore.LockRef{Key: rec.LockKey, LockID: rec.LockID, Fence: rec.Fence}
}

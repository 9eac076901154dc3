package core

import (
	"context"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// leaseRequest is what a use case asks of the one lease site
// (lockmgr.Manager.Take).
type leaseRequest = lockmgr.LeaseRequest

// lease is a lease a use case holds (lockmgr.Holding).
type lease = lockmgr.Holding

// Lease takes a lease for a use case through the one
// lease site (lockmgr.Manager.Take), naming the holder from the core's
// environment and reporting on its progress stream.
func (c *Core) Lease(ctx context.Context, req leaseRequest) (*lease, error) {
	req.Getenv, req.Progress = c.Getenv, c.Progress
	return c.Locks.Take(ctx, req)
}

// LeaseRef is the lease as a state write checks and records it (the key,
// lock id and fence).
func LeaseRef(l *lease) *statestore.LockRef {
	rec := l.Record()
	return &statestore.LockRef{Key: rec.LockKey, LockID: rec.LockID, Fence: rec.Fence}
}

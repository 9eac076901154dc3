package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// leaseRequest is what a use case asks of takeLease: the lock, why it is
// held (the holder record's metadata, docs/design.md#lock-record) and how
// long to wait for it.
type leaseRequest struct {
	Key string
	Op  lockmgr.Operation
	// DeploymentID, GitCommit and GitBranch go to the record's metadata;
	// an empty GitCommit or GitBranch keeps what the CI variables say
	// (lockmgr.Holder).
	DeploymentID         string
	GitCommit, GitBranch string
	Command              string // lock exec: the command line
	// Timeout is how long to wait for a held lock (--lock-timeout); 0
	// fails at once with *lockmgr.HeldError.
	Timeout time.Duration
	OnWait  func(lockmgr.WaitEvent)
	// Announce prints "Acquired lock" once the lease is taken and
	// "Released lock" once it is released (deploy and destroy), when
	// locking is on.
	Announce bool
}

// lease is a lease taken by takeLease, with the name of its holder.
type lease struct {
	*lockmgr.Lease
	By string // the record's lockedBy

	progress io.Writer // where the Acquired and Released lines go
	announce bool
}

// takeLease is the one place a use case takes a lock: it builds the holder
// record from getenv (lockmgr.Holder) and req, acquires req.Key from m
// and, with req.Announce, prints the Acquired line on progress. The caller
// releases it with releaseInto (or release, reporting the error itself).
// Errors: Acquire's (*lockmgr.HeldError when the lock stays held).
func takeLease(ctx context.Context, m *lockmgr.Manager, getenv func(string) string, progress io.Writer, req leaseRequest) (*lease, error) {
	by, md := lockmgr.Holder(getenv)
	md.Operation, md.DeploymentID, md.Command = req.Op, req.DeploymentID, req.Command
	if req.GitCommit != "" {
		md.GitCommit = req.GitCommit
	}
	if req.GitBranch != "" {
		md.GitBranch = req.GitBranch
	}
	l, err := m.Acquire(ctx, lockmgr.Request{Key: req.Key, LockedBy: by, Metadata: md, Timeout: req.Timeout, OnWait: req.OnWait})
	if err != nil {
		return nil, err
	}
	out := &lease{Lease: l, By: by, progress: progress, announce: req.Announce && m.Enabled()}
	if out.announce {
		rec := l.Record()
		fmt.Fprintf(progress, "Acquired lock %s (lock id %s, fence %d)\n", rec.LockKey, rec.LockID, rec.Fence)
	}
	return out, nil
}

// lease takes a lease for one of the Service's use cases, reporting on its
// progress stream.
func (s *Service) lease(ctx context.Context, req leaseRequest) (*lease, error) {
	return takeLease(ctx, s.d.Locks, s.d.Getenv, s.d.Progress, req)
}

// release releases the lease within 30 s, waiting out passing backend
// failures (docs/locking.md#backend-failures-while-waiting), and returns
// the failure: lockmgr.ErrLockLost when the lease was broken or taken over
// first, or the backend's error (the record then stays until it expires or
// is broken with unlock --force). An announced lease prints "Released
// lock" after a successful release.
func (l *lease) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := l.Release(ctx)
	if err == nil && l.announce {
		fmt.Fprintf(l.progress, "Released lock %s\n", l.Record().LockKey)
	}
	return err
}

// releaseInto releases the lease and joins a failure into *err, so that a
// use case's deferred release is never hidden (docs/design.md#lock-protocol):
// the use case then fails with "lock KEY was not released: ..." (wrapping
// release's error) besides any error of its own.
func (l *lease) releaseInto(err *error) {
	if rerr := l.release(); rerr != nil {
		*err = errors.Join(*err, fmt.Errorf("lock %s was not released: %w", l.Record().LockKey, rerr))
	}
}

// ref is the lease as a state write checks and records it (the key, lock
// id and fence).
func (l *lease) ref() *statestore.LockRef {
	rec := l.Record()
	return &statestore.LockRef{Key: rec.LockKey, LockID: rec.LockID, Fence: rec.Fence}
}

package lockmgr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ReleaseWithin bounds a use case's release of its lease
// (Holding.ReleaseBounded): passing backend failures are waited out for
// this long (docs/locking.md#backend-failures-while-waiting).
const ReleaseWithin = 30 * time.Second

// LeaseRequest is what a use case asks of Take: the lock, why it is held
// (the holder record's metadata, docs/design.md#lock-record) and how long
// to wait for it.
type LeaseRequest struct {
	Key string
	Op  Operation
	// Getenv names the process as a holder (Holder); nil is no
	// environment.
	Getenv func(string) string
	// DeploymentID, GitCommit and GitBranch go to the record's metadata;
	// an empty GitCommit or GitBranch keeps what the CI variables say
	// (Holder).
	DeploymentID         string
	GitCommit, GitBranch string
	Command              string // lock exec, guard stop: the command line
	// Timeout is how long to wait for a held lock (--lock-timeout); 0
	// fails at once with *HeldError. MaxRetries, above 0, also caps the
	// retries (Request.MaxRetries).
	Timeout    time.Duration
	MaxRetries int
	OnWait     func(WaitEvent)
	// Progress, with Announce, gets "Acquired lock" once the lease is
	// taken and "Released lock" once it is released (deploy and destroy),
	// when locking is on.
	Progress io.Writer
	Announce bool
}

// Holding is a lease a use case took with Take, with the name of its
// holder.
type Holding struct {
	*Lease
	By string // the record's lockedBy

	progress io.Writer
	announce bool
}

// Take is the one place a use case takes a lock: it builds the holder
// record from req.Getenv (Holder) and req, acquires req.Key and, with
// req.Announce, prints the Acquired line on req.Progress. The caller
// releases it with ReleaseInto or ReleaseBounded (or keeps it with Keep).
// Errors: Acquire's (*HeldError when the lock stays held).
func (m *Manager) Take(ctx context.Context, req LeaseRequest) (*Holding, error) {
	getenv := req.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	by, md := Holder(getenv)
	md.Operation, md.DeploymentID, md.Command = req.Op, req.DeploymentID, req.Command
	if req.GitCommit != "" {
		md.GitCommit = req.GitCommit
	}
	if req.GitBranch != "" {
		md.GitBranch = req.GitBranch
	}
	l, err := m.Acquire(ctx, Request{Key: req.Key, LockedBy: by, Metadata: md, Timeout: req.Timeout,
		MaxRetries: req.MaxRetries, OnWait: req.OnWait})
	if err != nil {
		return nil, err
	}
	h := &Holding{Lease: l, By: by, progress: req.Progress, announce: req.Announce && req.Progress != nil && m.Enabled()}
	if h.announce {
		rec := l.Record()
		fmt.Fprintf(h.progress, "Acquired lock %s (lock id %s, fence %d)\n", rec.LockKey, rec.LockID, rec.Fence)
	}
	return h, nil
}

// ReleaseBounded releases the lease within ReleaseWithin, waiting out
// passing backend failures, even when the use case's context was cancelled
// (Ctrl-C), and returns the failure: ErrLockLost when the lease was broken
// or taken over first, or the backend's error (the record then stays until
// it expires or is broken with unlock --force). An announced lease prints
// "Released lock" after a successful release.
func (h *Holding) ReleaseBounded() error {
	ctx, cancel := context.WithTimeout(context.Background(), ReleaseWithin)
	defer cancel()
	err := h.Release(ctx)
	if err == nil && h.announce {
		fmt.Fprintf(h.progress, "Released lock %s\n", h.Record().LockKey)
	}
	return err
}

// ReleaseInto releases the lease (ReleaseBounded) and joins a failure into
// *err, so that a use case's deferred release is never hidden
// (docs/design.md#lock-protocol): the use case then fails with "lock KEY
// was not released: ..." (wrapping the release's error) besides any error
// of its own.
func (h *Holding) ReleaseInto(err *error) {
	if rerr := h.ReleaseBounded(); rerr != nil {
		*err = errors.Join(*err, fmt.Errorf("lock %s was not released: %w", h.Record().LockKey, rerr))
	}
}

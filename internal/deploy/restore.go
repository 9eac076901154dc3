package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// RestoreRequest picks a history snapshot by serial or by time (the newest
// snapshot written at or before At).
type RestoreRequest struct {
	Target      Target // stack and environment only
	Serial      int64
	At          time.Time
	LockTimeout time.Duration
	// Confirm is shown the snapshot and the current head; nil means --yes.
	Confirm func(snap *statestore.State, current statestore.Head) (bool, error)
	Dir     string // deployer.yaml's directory, for git info
}

// Restore takes the stack lock and writes the chosen snapshot as a new serial
// (history stays append-only) with a deployment entry of type restore
// (docs/design.md#state-writes). It is the one command that may write over a state that failed
// verification.
func (s *Service) Restore(ctx context.Context, req RestoreRequest) (statestore.Head, *statestore.State, error) {
	t := Target{Stack: req.Target.Stack, Env: req.Target.Env}
	snap, err := s.findSnapshot(ctx, t, req)
	if err != nil {
		return statestore.Head{}, nil, err
	}
	depID := NewDeploymentID()
	commit, branch := s.gitInfo(req.Dir)
	by, md := lockmgr.Holder(s.d.Getenv)
	md.DeploymentID, md.Operation, md.GitCommit, md.GitBranch = depID, "restore", commit, branch
	lease, err := s.d.Locks.Acquire(ctx, lockmgr.Request{Key: t.LockKey(), LockedBy: by, Metadata: md, Timeout: req.LockTimeout})
	if err != nil {
		return statestore.Head{}, nil, err
	}
	defer releaseLease(lease)
	work := lease.Context()

	head, err := s.currentHead(work, t)
	if err != nil {
		return statestore.Head{}, nil, err
	}
	if head.Lineage != "" && snap.Lineage != head.Lineage {
		return statestore.Head{}, nil, &statestore.ConflictError{Location: s.d.Store.Backend().Location(t.Stack, t.Env),
			Reason: fmt.Sprintf("snapshot serial %d has lineage %s but the state has lineage %s: it belongs to another state", snap.Serial, snap.Lineage, head.Lineage)}
	}
	if req.Confirm != nil {
		ok, err := req.Confirm(snap, head)
		if err != nil {
			return statestore.Head{}, nil, err
		}
		if !ok {
			return statestore.Head{}, nil, ErrDeclined
		}
	}
	now := s.d.Now().UTC()
	from := snap.Serial
	next := cloneState(snap)
	next.Serial = head.Serial
	dep := statestore.Deployment{DeploymentID: depID, Type: "restore", Timestamp: now, TriggeredBy: by,
		GitCommit: commit, Status: "success", RestoredFrom: from, Scope: t.LockKey()}
	// Keep the full deployment history of the current state: restore rolls
	// resources back, not the record of what happened.
	if cur, _, err := s.d.Store.Load(work, t.Stack, t.Env); err == nil {
		next.DeploymentHistory = cur.DeploymentHistory
	}
	cs := changeSet{}
	rec := lease.Record()
	cs.apply(next, dep, rec, by, commit, branch, now)
	if lease.Lost() != nil {
		return statestore.Head{}, nil, fmt.Errorf("restore stopped: %w", lockmgr.ErrLockLost)
	}
	newHead, err := s.d.Store.Save(work, next, head, &statestore.LockRef{Key: rec.LockKey, LockID: rec.LockID, Fence: rec.Fence})
	dep.DurationSeconds = s.d.Now().Sub(now).Seconds()
	s.finished(t, dep, err)
	if err != nil {
		return statestore.Head{}, nil, err
	}
	s.d.Audit.Info("state.restored", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial,
		"restored_from", from, "deployment_id", depID, "lock_id", rec.LockID)
	return newHead, next, nil
}

func (s *Service) findSnapshot(ctx context.Context, t Target, req RestoreRequest) (*statestore.State, error) {
	serial := req.Serial
	if serial == 0 {
		snaps, err := s.d.Store.History(ctx, t.Stack, t.Env, 0)
		if err != nil {
			return nil, err
		}
		// The state as it was at req.At is a snapshot that became state.json:
		// skip those above the current serial (their state.json write never
		// completed; `history` marks them uncommitted). History only grows,
		// so reading the head before taking the lock is safe.
		head, err := s.currentHead(ctx, t)
		if err != nil {
			return nil, err
		}
		for _, sn := range snaps { // newest first
			if head.Serial > 0 && sn.Serial > head.Serial {
				continue
			}
			if !sn.Time.After(req.At) {
				serial = sn.Serial
				break
			}
		}
		if serial == 0 {
			return nil, fmt.Errorf("no snapshot of %s/%s was written at or before %s: see deployer history", t.Stack, t.Env, req.At.UTC().Format(time.RFC3339))
		}
	}
	snap, err := s.d.Store.Snapshot(ctx, t.Stack, t.Env, serial)
	if errors.Is(err, statestore.ErrNotFound) {
		return nil, fmt.Errorf("no snapshot with serial %d in %s/%s: see deployer history: %w", serial, t.Stack, t.Env, err)
	}
	return snap, err
}

// currentHead returns the head of the stored state even when it fails
// verification (restore may replace a corrupt state), or the zero Head.
func (s *Service) currentHead(ctx context.Context, t Target) (statestore.Head, error) {
	_, head, err := s.d.Store.Load(ctx, t.Stack, t.Env)
	if err == nil {
		return head, nil
	}
	if errors.Is(err, statestore.ErrNotFound) {
		return statestore.Head{}, nil
	}
	var bad *statestore.ChecksumError
	if !errors.As(err, &bad) {
		return statestore.Head{}, err
	}
	data, ver, rerr := s.d.Store.Backend().Read(ctx, t.Stack, t.Env)
	if rerr != nil {
		return statestore.Head{}, rerr
	}
	serial, lineage := statestore.PeekHead(data)
	return statestore.Head{Version: ver, Serial: serial, Lineage: lineage}, nil
}

// Push writes a state document (an errored state saved by a failed deploy)
// as the next serial, under the stack lock: its lineage must match the
// stored state (docs/state-format.md#checksums-and-canonical-json).
func (s *Service) Push(ctx context.Context, t Target, st *statestore.State, lockTimeout time.Duration) (statestore.Head, error) {
	by, md := lockmgr.Holder(s.d.Getenv)
	md.Operation = "state-push"
	lease, err := s.d.Locks.Acquire(ctx, lockmgr.Request{Key: t.LockKey(), LockedBy: by, Metadata: md, Timeout: lockTimeout})
	if err != nil {
		return statestore.Head{}, err
	}
	defer releaseLease(lease)
	cur, head, err := s.loadOrNew(lease.Context(), t)
	if err != nil {
		return statestore.Head{}, err
	}
	if head.Lineage != "" && st.Lineage != head.Lineage {
		return statestore.Head{}, &statestore.ConflictError{Location: s.d.Store.Backend().Location(t.Stack, t.Env),
			Reason: fmt.Sprintf("the pushed state has lineage %s but the stored state has lineage %s", st.Lineage, head.Lineage)}
	}
	if st.Metadata.Stack != t.Stack || st.Metadata.Environment != t.Env {
		return statestore.Head{}, fmt.Errorf("the pushed state is of %s/%s, not %s/%s", st.Metadata.Stack, st.Metadata.Environment, t.Stack, t.Env)
	}
	_ = cur
	if st.Lineage == "" {
		st.Lineage = head.Lineage
	}
	st.Serial = head.Serial + 1
	rec := lease.Record()
	newHead, err := s.d.Store.Save(lease.Context(), st, head, &statestore.LockRef{Key: rec.LockKey, LockID: rec.LockID, Fence: rec.Fence})
	if err == nil {
		s.d.Audit.Info("state.saved", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial, "lineage", newHead.Lineage, "operation", "push")
	}
	return newHead, err
}

package stateops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/executor"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// RestoreRequest picks a history snapshot by serial or by time (the newest
// snapshot that became state.json, written at or before At).
type RestoreRequest struct {
	Target      core.Target // stack and environment only
	Serial      int64
	At          time.Time
	LockTimeout time.Duration
	// Confirm is shown what the restore will write, under the lock, before
	// it writes; false declines (core.ErrDeclined). nil means --yes.
	Confirm func(RestorePreview) (bool, error)
	Dir     string // deployer.yaml's directory, for git info
}

// RestorePreview is what a restore is about to write.
type RestorePreview struct {
	Snapshot *statestore.State       // the snapshot to restore
	Info     statestore.SnapshotInfo // its name and time; Uncommitted if it never became state.json
	Current  statestore.Head         // the stored state it replaces (zero: none)
	Serial   int64                   // the serial it will be written as: Current.Serial+1
}

// RestoreResult is what a restore wrote.
type RestoreResult struct {
	Head         statestore.Head   // of the new state.json
	State        *statestore.State // the state written
	RestoredFrom int64             // the serial of the snapshot restored
	DeploymentID string            // of the deployment entry of type restore
}

// Restore takes the stack lock and writes the chosen snapshot as a new serial
// (history stays append-only) with a deployment entry of type restore
// (docs/design.md#state-writes). It is the one command that may write over a
// state that failed verification. Errors: no such snapshot (wrapping
// statestore.ErrNotFound), *lockmgr.HeldError, *statestore.ConflictError
// (another lineage, or the state moved on), core.ErrDeclined. Once the
// lock is released, the Reporter hears what it wrote (Restored).
func (s *Ops) Restore(ctx context.Context, req RestoreRequest) (*RestoreResult, error) {
	res, err := s.restore(ctx, req)
	if err == nil {
		s.r.Restored(core.Target{Stack: req.Target.Stack, Env: req.Target.Env}, res)
	}
	return res, err
}

func (s *Ops) restore(ctx context.Context, req RestoreRequest) (_ *RestoreResult, err error) {
	t := core.Target{Stack: req.Target.Stack, Env: req.Target.Env}
	if err := s.c.Open(ctx); err != nil {
		return nil, err
	}
	info, snap, err := s.findSnapshot(ctx, t, req)
	if err != nil {
		return nil, err
	}
	depID, commit, branch, lease, err := s.leaseRun(ctx, t, lockmgr.OpRestore, req.Dir, req.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer lease.ReleaseInto(&err)
	by := lease.By
	work := lease.Context()

	cur, head, _, err := s.c.LoadOrHead(work, t) // restore may replace a state that fails verification
	if err != nil {
		return nil, err
	}
	if head.Lineage != "" && snap.Lineage != head.Lineage {
		return nil, &statestore.ConflictError{Location: s.c.Store.Location(t.Stack, t.Env),
			Reason: fmt.Sprintf("snapshot serial %d has lineage %s but the state has lineage %s: it belongs to another state", snap.Serial, snap.Lineage, head.Lineage)}
	}
	if req.Confirm != nil {
		// Marked against the state.json read under the lock.
		snaps, err := s.c.Store.History(work, t.Stack, t.Env, head, 0)
		if err != nil {
			return nil, err
		}
		for _, sn := range snaps {
			if sn.Name == info.Name {
				info = sn
			}
		}
		ok, err := req.Confirm(RestorePreview{Snapshot: snap, Info: info, Current: head, Serial: head.Serial + 1})
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, core.ErrDeclined
		}
	}
	now := s.c.Now().UTC()
	from := snap.Serial
	next := core.CloneState(snap)
	next.Serial = head.Serial
	dep := statestore.Deployment{DeploymentID: depID, Type: string(lockmgr.OpRestore), Timestamp: now, TriggeredBy: by,
		GitCommit: commit, Status: statestore.DeploymentSuccess, RestoredFrom: from, Scope: t.LockKey()}
	// Keep the full deployment history of the current state: restore rolls
	// resources back, not the record of what happened.
	if cur != nil {
		next.DeploymentHistory = cur.DeploymentHistory
	}
	cs := core.ChangeSet{}
	rec := lease.Record()
	cs.Apply(next, dep, rec, by, commit, branch, now)
	if lease.Lost() != nil {
		return nil, fmt.Errorf("restore stopped: %w", lockmgr.ErrLockLost)
	}
	newHead, err := s.c.Store.Save(work, next, head, core.LeaseRef(lease))
	dep.DurationSeconds = s.c.Now().Sub(now).Seconds()
	s.c.Finish(t, dep, executor.Summary{}, err) // a restore changes no component
	if err != nil {
		return nil, err
	}
	s.c.Audit.Info("state.restored", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial,
		"restored_from", from, "deployment_id", depID, "lock_id", rec.LockID)
	return &RestoreResult{Head: newHead, State: next, RestoredFrom: from, DeploymentID: depID}, nil
}

// findSnapshot reads the snapshot req names: by serial, the one that serial
// stands for (statestore.SnapshotOf); by time, the newest snapshot written
// at or before req.At that became state.json: one marked uncommitted
// (docs/state-format.md#history-snapshots) was never the state, at any time.
// History only grows, so reading it before taking the lock is safe.
func (s *Ops) findSnapshot(ctx context.Context, t core.Target, req RestoreRequest) (statestore.SnapshotInfo, *statestore.State, error) {
	var head statestore.Head // the marks matter only to --timestamp: Restore marks the chosen one again under the lock
	if req.Serial == 0 {
		var err error
		if head, err = s.c.Store.CurrentHead(ctx, t.Stack, t.Env); err != nil {
			return statestore.SnapshotInfo{}, nil, err
		}
	}
	snaps, err := s.c.Store.History(ctx, t.Stack, t.Env, head, 0)
	if err != nil {
		return statestore.SnapshotInfo{}, nil, err
	}
	var pick statestore.SnapshotInfo
	found := false
	if req.Serial > 0 {
		pick, found = statestore.SnapshotOf(snaps, req.Serial)
		if !found {
			return statestore.SnapshotInfo{}, nil, fmt.Errorf("no snapshot with serial %d in %s/%s: see deployer history: %w", req.Serial, t.Stack, t.Env, statestore.ErrNotFound)
		}
	} else {
		for _, sn := range snaps { // newest first
			if !sn.Uncommitted && !sn.Time.After(req.At) {
				pick, found = sn, true
				break
			}
		}
		if !found {
			return statestore.SnapshotInfo{}, nil, fmt.Errorf("no snapshot of %s/%s was written at or before %s: see deployer history", t.Stack, t.Env, req.At.UTC().Format(time.RFC3339))
		}
	}
	snap, err := s.c.Store.ReadSnapshot(ctx, t.Stack, t.Env, pick)
	if errors.Is(err, statestore.ErrNotFound) {
		return statestore.SnapshotInfo{}, nil, fmt.Errorf("no snapshot with serial %d in %s/%s: see deployer history: %w", pick.Serial, t.Stack, t.Env, err)
	}
	return pick, snap, err
}

// Push writes req.State (an errored state saved by a failed deploy) to
// req.Target as the next serial, under the stack lock. The document must be the next
// version of the stored state: the same lineage, and the serial one above
// the stored one (a state written from serial N has serial N+1, so its own
// serial records what it was based on; docs/design.md#state-writes). Any
// other document is refused with a *statestore.ConflictError, since writing
// it would drop what was written after it. req.Force writes it anyway, as the
// next serial, with a state-push-forced deployment record and a
// state.push_forced audit event naming what was overridden.
func (s *Ops) Push(ctx context.Context, req PushRequest) (_ statestore.Head, err error) {
	t, st := req.Target, req.State
	if err := s.c.Open(ctx); err != nil {
		return statestore.Head{}, err
	}
	if st.Metadata.Stack != t.Stack || st.Metadata.Environment != t.Env {
		return statestore.Head{}, fmt.Errorf("the pushed state is of %s/%s, not %s/%s", st.Metadata.Stack, st.Metadata.Environment, t.Stack, t.Env)
	}
	lease, err := s.c.Lease(ctx, lockmgr.LeaseRequest{Key: t.LockKey(), Op: lockmgr.OpStatePush, Timeout: req.LockTimeout})
	if err != nil {
		return statestore.Head{}, err
	}
	defer lease.ReleaseInto(&err)
	by := lease.By
	cur, head, err := s.c.LoadOrNew(lease.Context(), t)
	if err != nil {
		return statestore.Head{}, err
	}
	reason := pushMismatch(st, head)
	if reason == "" {
		reason = basedOnMismatch(st, cur, head)
	}
	if reason != "" && !req.Force {
		return statestore.Head{}, &statestore.ConflictError{Location: s.c.Store.Location(t.Stack, t.Env),
			Reason: reason + fmt.Sprintf(": writing it would drop what was written since; "+
				"compare it with `deployer state show -s %s -e %s`, or write it anyway with `deployer state push FILE -s %s -e %s --force`",
				t.Stack, t.Env, t.Stack, t.Env)}
	}
	fileSerial, fileLineage := st.Serial, st.Lineage
	rec := lease.Record()
	// Every push is recorded: who pushed, and whether it was forced.
	now := s.c.Now().UTC()
	dep := statestore.Deployment{DeploymentID: core.NewDeploymentID(), Type: string(lockmgr.OpStatePush), Timestamp: now, TriggeredBy: by,
		Status: statestore.DeploymentSuccess, Scope: t.LockKey()}
	if reason != "" {
		dep.Type = "state-push-forced"
	}
	st.Serial = head.Serial // apply raises it to the next one
	// The history is the stored state's, never the file's: a record in a
	// file (a forged run record a deploy --run-id waits for) is not
	// imported; the push itself is recorded (docs/operations.md).
	st.DeploymentHistory, st.BasedOn = nil, ""
	if !head.IsZero() && cur != nil {
		st.DeploymentHistory = slices.Clone(cur.DeploymentHistory)
	}
	core.ChangeSet{}.Apply(st, dep, rec, by, st.Metadata.GitCommit, st.Metadata.GitBranch, now)
	st.Lineage = cmp.Or(head.Lineage, st.Lineage)
	newHead, err := s.c.Store.Save(lease.Context(), st, head, core.LeaseRef(lease))
	if err != nil {
		return newHead, err
	}
	if reason != "" {
		s.c.Audit.Warn("state.push_forced", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial,
			"lineage", newHead.Lineage, "file_serial", fileSerial, "file_lineage", fileLineage,
			"stored_serial", head.Serial, "stored_lineage", head.Lineage, "reason", reason, "lock_id", rec.LockID)
	}
	s.c.Audit.Info("state.saved", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial, "lineage", newHead.Lineage, "operation", "push")
	return newHead, nil
}

// basedOnMismatch says why st, an errored file of the next serial, was not
// written from the stored state cur at head, or "" when its based_on is
// cur's BaseDigest: a file without based_on (written by hand, edited from a
// snapshot, or by an older deployer) or written from another state needs
// --force.
func basedOnMismatch(st, cur *statestore.State, head statestore.Head) string {
	switch st.BasedOn {
	case statestore.BaseDigest(cur, head):
		return ""
	case "":
		return "the pushed state does not say which stored state it was written from (based_on: an errored state file has it; a snapshot or an edited file does not)"
	}
	return "the pushed state was written from another state than the stored one (its based_on does not match the stored state)"
}

// pushMismatch says why st is not the next version of the state at head,
// or "" when it is: the same lineage (or none stored yet), and a serial one
// above the stored one.
func pushMismatch(st *statestore.State, head statestore.Head) string {
	if head.Lineage != "" && st.Lineage != head.Lineage {
		return fmt.Sprintf("the pushed state has lineage %s but the stored state has lineage %s: it is a different state", st.Lineage, head.Lineage)
	}
	if st.Serial != head.Serial+1 {
		return fmt.Sprintf("the pushed state has serial %d, so it was written from serial %d, but the stored state is at serial %d",
			st.Serial, st.Serial-1, head.Serial)
	}
	return ""
}

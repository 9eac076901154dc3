package stateops

import (
	"context"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// HistoryRequest names the stack/environment whose history to list.
type HistoryRequest struct {
	Target core.Target // stack and environment only
	Limit  int         // at most this many entries, newest first; <= 0: all
}

// HistoryEntry is one history snapshot joined with the deployment that wrote
// it: a row of `deployer history` and, with these names, an object of
// `history --json` (docs/commands.md). A snapshot that never became
// state.json has Status "uncommitted" and no deployment.
type HistoryEntry struct {
	Serial       int64                       `json:"serial"`
	Time         time.Time                   `json:"time"`     // when the snapshot was written (UTC, milliseconds)
	Snapshot     string                      `json:"snapshot"` // its name, e.g. 2024-01-15T14-20-00.000Z-12.json
	DeploymentID string                      `json:"deployment_id,omitempty"`
	Type         string                      `json:"type,omitempty"` // deploy | destroy | restore
	TriggeredBy  string                      `json:"triggered_by,omitempty"`
	GitCommit    string                      `json:"git_commit,omitempty"`
	Status       statestore.DeploymentStatus `json:"status,omitempty"` // the deployment's status, or StatusUncommitted
	Duration     float64                     `json:"duration_seconds"` // seconds; of an abandoned deployment, from its start to its last heartbeat
	// Started is when the deployment started (UTC, seconds): for an
	// abandoned one, when its lock was taken, long before the snapshot that
	// recorded it. Zero without a deployment.
	Started      time.Time                    `json:"started,omitzero"`
	Changed      *statestore.ResourcesChanged `json:"resources_changed,omitempty"`
	RestoredFrom int64                        `json:"restored_from,omitempty"`
	Uncommitted  bool                         `json:"uncommitted,omitempty"`
	// Moved are the state entries the deployment moved ("FROM -> TO").
	Moved []string `json:"moved,omitempty"`
	// Removed are the components a state-rm forgot (removed from the
	// state without running their delete).
	Removed []string `json:"removed,omitempty"`
	// Imported are the components the deployment imported ("ADDR (id ID)").
	Imported []string `json:"imported,omitempty"`
	// Deleted are the components the deployment deleted (ran their
	// delete), sorted.
	Deleted []string `json:"deleted,omitempty"`
	// Error is why the deployment failed, as its record keeps it (secrets
	// masked when it was written); empty when it did not fail.
	Error string `json:"error,omitempty"`
}

// StatusUncommitted is the Status of a history entry whose snapshot never
// became state.json (docs/state-format.md#history-snapshots).
const StatusUncommitted statestore.DeploymentStatus = "uncommitted"

// HistoryResult is what History found.
type HistoryResult struct {
	Entries []HistoryEntry // newest first
	// StateErr is the *statestore.ChecksumError of a state.json that failed
	// verification. The snapshots are listed all the same (they are what
	// restore needs); the command fails with StateErr once it has shown them.
	StateErr error
}

// History lists the history snapshots of a stack/environment newest first,
// each joined with the deployment record that wrote it: from the
// deployment_history of state.json, or, for snapshots older than the
// entries state.json keeps, from the snapshot itself. Snapshots that never
// became state.json are marked by the Store (statestore.Store.History,
// docs/state-format.md#history-snapshots), the one definition restore uses
// too. No state and no snapshot is an error saying nothing was deployed.
func (s *Ops) History(ctx context.Context, req HistoryRequest) (*HistoryResult, error) {
	t := req.Target
	if err := s.c.Open(ctx); err != nil {
		return nil, err
	}
	store := s.c.Store
	res := &HistoryResult{}
	// A state.json that fails verification still leaves the snapshots
	// readable: they are listed against what it records, then the command
	// fails with StateErr.
	st, head, stateErr, err := s.c.LoadOrHead(ctx, t)
	if err != nil {
		return nil, err
	}
	res.StateErr = stateErr
	// A serial may hold two records, newest first: a pushed errored
	// state keeps the record of the deploy that wrote it beside the
	// state-push's (docs/operations.md#an-errored-state-first).
	deps := map[int64][]statestore.Deployment{}
	if st != nil {
		for _, d := range st.DeploymentHistory {
			deps[d.Serial] = append(deps[d.Serial], d)
		}
	}
	snaps, err := store.History(ctx, t.Stack, t.Env, head, req.Limit)
	if err != nil {
		return nil, err
	}
	if head.IsZero() && len(snaps) == 0 {
		return nil, fmt.Errorf("no state for %s/%s: nothing deployed yet", t.Stack, t.Env)
	}
	res.Entries = make([]HistoryEntry, 0, len(snaps))
	for _, sn := range snaps {
		e := HistoryEntry{Serial: sn.Serial, Time: sn.Time, Snapshot: sn.Name}
		if sn.Uncommitted {
			// Kept (it may be the only copy of what an apply produced) but
			// no deployment is attached: none completed with it.
			e.Status, e.Uncommitted = StatusUncommitted, true
			res.Entries = append(res.Entries, e)
			continue
		}
		recs := deps[sn.Serial]
		if len(recs) == 0 {
			// Older than the deployment_history kept in state.json.
			if snap, err := store.ReadSnapshot(ctx, t.Stack, t.Env, sn); err == nil {
				for _, d := range snap.DeploymentHistory {
					if d.Serial == sn.Serial {
						recs = append(recs, d)
					}
				}
			}
		}
		if len(recs) == 0 {
			res.Entries = append(res.Entries, e)
		}
		for _, d := range recs {
			e := e
			c := d.ResourcesChanged
			e.DeploymentID, e.Type, e.TriggeredBy, e.GitCommit = d.DeploymentID, d.Type, d.TriggeredBy, d.GitCommit
			e.Status, e.Duration, e.Changed, e.RestoredFrom = d.Status, d.DurationSeconds, &c, d.RestoredFrom
			e.Started, e.Moved, e.Removed, e.Imported, e.Deleted, e.Error = d.Timestamp.UTC(), d.Moved, d.Removed, d.Imported, d.Deleted, d.Error
			res.Entries = append(res.Entries, e)
		}
	}
	return res, nil
}

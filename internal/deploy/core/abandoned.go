package core

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Holders collects the records that stood in the way of a lease: the
// live ones of the stack/environment listed before acquiring, and the
// holders seen while waiting. Each deploy's start is its lock record
// (metadata.deployment_id, operation, lockedAt), so these are the starts of
// the deployments that might never have finished.
type Holders struct {
	mu   sync.Mutex
	seen map[string]lockmgr.Record // by lock id: the last record seen
}

func (w *Holders) add(rec lockmgr.Record) {
	if rec.Metadata.DeploymentID == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]lockmgr.Record{}
	}
	if old, ok := w.seen[rec.LockID]; !ok || rec.ExpiresAt >= old.ExpiresAt {
		w.seen[rec.LockID] = rec
	}
}

func (w *Holders) OnWait(ev lockmgr.WaitEvent) {
	if !ev.Done {
		w.add(ev.Holder)
	}
}

// WatchHolders lists the records of key's stack/environment that conflict
// with key, before the lease is asked for (one strongly consistent List).
func (c *Core) WatchHolders(ctx context.Context, key string) *Holders {
	w := &Holders{}
	pk, ok := lockmgr.ParseKey(key)
	if !ok || pk.Level == lockmgr.LevelCustom {
		return w
	}
	held, err := c.Locks.List(ctx, lockmgr.StackKey(pk.Stack, pk.Env))
	if err != nil {
		return w // bookkeeping only: the acquire reports a broken backend
	}
	for _, st := range held {
		if lockmgr.Conflicts(key, st.LockKey) {
			w.add(st.Record)
		}
	}
	return w
}

// Abandoned returns the records seen that had expired when lease was taken:
// their holders stopped renewing them and never released them.
func (w *Holders) Abandoned(lease lockmgr.Record) []lockmgr.Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []lockmgr.Record
	for id, r := range w.seen {
		if id != lease.LockID && r.ExpiresAt < lease.LockedAt {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b lockmgr.Record) int { return int(a.LockedAt - b.LockedAt) })
	return out
}

// RecordAbandoned writes a deployment entry with status abandoned for each
// of recs not in the state's deployment_history yet, as one state write
// under lease. It is bookkeeping: a failure is reported on the progress
// stream and does not stop the command.
func (c *Core) RecordAbandoned(ctx context.Context, lease *lockmgr.Holding, t Target, recs []lockmgr.Record, how string) {
	if len(recs) == 0 {
		return
	}
	if err := c.WriteAbandoned(ctx, lease, t, recs, how); err != nil {
		fmt.Fprintf(c.Progress, "warning: could not record the abandoned deployments in the history: %v\n", err)
	}
}

func (c *Core) WriteAbandoned(ctx context.Context, lease *lockmgr.Holding, t Target, recs []lockmgr.Record, how string) error {
	st, head, err := c.LoadOrNew(ctx, t)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, d := range st.DeploymentHistory {
		known[d.DeploymentID] = true
	}
	now := c.Now().UTC()
	rec := lease.Record()
	var add []statestore.Deployment
	for _, r := range recs {
		id := r.Metadata.DeploymentID
		if known[id] {
			continue
		}
		known[id] = true
		op := r.Metadata.Operation
		if op == "" {
			op = lockmgr.OpDeploy
		}
		started := time.Unix(r.LockedAt, 0).UTC()
		add = append(add, statestore.Deployment{
			DeploymentID: id, Type: string(op), Timestamp: started, TriggeredBy: r.LockedBy, GitCommit: r.Metadata.GitCommit,
			Status: statestore.DeploymentAbandoned, Scope: r.LockKey,
			// What is known of its run: from its start to its last sign of life.
			DurationSeconds: float64(max(r.LastHeartbeat-r.LockedAt, 0)),
			Error: fmt.Sprintf("the deploying process (pid %d on %s) stopped without finishing; its lock %s was %s",
				r.Metadata.PID, orUnknown(r.Metadata.Hostname), r.LockID, how),
		})
		fmt.Fprintf(c.Progress, "Deployment %s by %s (started %s) was abandoned: its lock was %s; recorded in the history.\n",
			id, r.LockedBy, started.Format(time.RFC3339), how)
	}
	if len(add) == 0 {
		return nil
	}
	st.Serial++
	for i := range add {
		add[i].Serial = st.Serial
	}
	st.DeploymentHistory = append(add, st.DeploymentHistory...)
	if len(st.DeploymentHistory) > MaxHistoryInState {
		st.DeploymentHistory = st.DeploymentHistory[:MaxHistoryInState]
	}
	st.Metadata.LastUpdated, st.Metadata.LastUpdatedBy, st.Metadata.Fence = now, rec.LockedBy, rec.Fence
	_, err = c.Store.Save(ctx, st, head, LeaseRef(lease))
	if err == nil {
		c.Audit.Info("deploy.abandoned", "stack", t.Stack, "environment", t.Env, "count", len(add), "serial", st.Serial)
	}
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown host"
	}
	return s
}

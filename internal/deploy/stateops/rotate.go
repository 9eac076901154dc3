package stateops

import (
	"context"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// RotateRequest asks to re-encrypt the secrets of a state (`secrets
// rotate`, docs/secrets.md).
type RotateRequest struct {
	Target core.Target // its stack and environment
	// To is the Sealer of the new passphrase or key.
	To *secrets.Sealer
	// LockTimeout is how long to wait for a held stack lock (0: fail at once).
	LockTimeout time.Duration
}

// Rotate re-encrypts the secrets of req.Target's state with req.To under
// the stack lock, as a new serial with a deployment
// entry of type rotate-secrets (docs/secrets.md). The state is opened with
// the Store's own Sealer first; a state without secrets is rewritten as it
// is, with its secrets block removed.
func (s *Ops) Rotate(ctx context.Context, req RotateRequest) (_ statestore.Head, err error) {
	t, to := core.Target{Stack: req.Target.Stack, Env: req.Target.Env}, req.To
	if err := s.c.Open(ctx); err != nil {
		return statestore.Head{}, err
	}
	if err := s.c.CheckSecrets(ctx, t, false); err != nil {
		return statestore.Head{}, err
	}
	if err := to.Check(ctx, nil, true); err != nil {
		return statestore.Head{}, err
	}
	depID := core.NewDeploymentID()
	lease, err := s.c.Lease(ctx, lockmgr.LeaseRequest{Key: t.LockKey(), Op: lockmgr.OpRotateSecrets, DeploymentID: depID, Timeout: req.LockTimeout})
	if err != nil {
		return statestore.Head{}, err
	}
	defer lease.ReleaseInto(&err)
	by := lease.By
	work := lease.Context()
	st, head, err := s.c.Store.Load(work, t.Stack, t.Env)
	if err != nil {
		return statestore.Head{}, err
	}
	now := s.c.Now().UTC()
	dep := statestore.Deployment{DeploymentID: depID, Type: string(lockmgr.OpRotateSecrets), Timestamp: now, TriggeredBy: by,
		Status: statestore.DeploymentSuccess, Scope: t.LockKey()}
	rec := lease.Record()
	next := core.CloneState(st)
	next.Secrets = nil // sealed afresh by to
	core.ChangeSet{}.Apply(next, dep, rec, by, st.Metadata.GitCommit, st.Metadata.GitBranch, now)
	if lease.Lost() != nil {
		return statestore.Head{}, fmt.Errorf("rotate stopped: %w", lockmgr.ErrLockLost)
	}
	sealed, err := to.Seal(work, next)
	if err != nil {
		return statestore.Head{}, err
	}
	newHead, err := statestore.New(s.c.Store.Backend(), statestore.WithClock(s.c.Now)).Save(work, sealed, head,
		core.LeaseRef(lease))
	if err != nil {
		return statestore.Head{}, err
	}
	s.c.Audit.Info("secrets.rotated", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial,
		"deployment_id", depID, "lock_id", rec.LockID, "to", to.Provider().Name())
	return newHead, nil
}

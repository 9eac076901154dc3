package deploy

import (
	"context"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// learnSecrets gives the Masker every secret text of the resolved config
// (docs/secrets.md) and reports whether there is any: values under keys
// named like password/secret/token/key, values written {secret: true, value:
// X}, and references marked secret.
func (s *Service) learnSecrets(res *config.Resolved) bool {
	found := false
	add := func(v any) {
		found = true
		s.d.Masker.Add(secrets.Strings(v)...)
	}
	secrets.Leaves(res.EnvConfig, add)
	for _, c := range res.Components {
		secrets.Leaves(c.Config, add)
	}
	return found
}

// learnOutputs gives the Masker the secret values among a component's
// outputs (by key name or marked {secret: true, value: X}), and under
// GitHub Actions announces them, as soon as the engine has read them:
// before any dependent runs (docs/secrets.md#masked-everywhere).
func (s *Service) learnOutputs(_ string, outputs map[string]any) {
	secrets.Leaves(outputs, func(v any) { s.d.Masker.Add(secrets.Strings(v)...) })
}

// checkSecrets verifies, before any lock is taken, that the secrets
// provider opens the stored state (a wrong passphrase or an unavailable KMS
// key is a *statestore.SecretsError, exit 1), and that it can make a key
// when the run has secrets to store and the state has none yet.
func (s *Service) checkSecrets(ctx context.Context, t Target, needKey bool) error {
	return s.d.Store.CheckSecrets(ctx, t.Stack, t.Env, needKey)
}

// RotateRequest asks to re-encrypt the secrets of a state (`secrets
// rotate`, docs/secrets.md).
type RotateRequest struct {
	Target Target // its stack and environment
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
func (s *Service) Rotate(ctx context.Context, req RotateRequest) (_ statestore.Head, err error) {
	t, to := Target{Stack: req.Target.Stack, Env: req.Target.Env}, req.To
	if err := s.open(ctx); err != nil {
		return statestore.Head{}, err
	}
	if err := s.checkSecrets(ctx, t, false); err != nil {
		return statestore.Head{}, err
	}
	if err := to.Check(ctx, nil, true); err != nil {
		return statestore.Head{}, err
	}
	depID := NewDeploymentID()
	lease, err := s.lease(ctx, leaseRequest{Key: t.LockKey(), Op: lockmgr.OpRotateSecrets, DeploymentID: depID, Timeout: req.LockTimeout})
	if err != nil {
		return statestore.Head{}, err
	}
	defer lease.ReleaseInto(&err)
	by := lease.By
	work := lease.Context()
	st, head, err := s.d.Store.Load(work, t.Stack, t.Env)
	if err != nil {
		return statestore.Head{}, err
	}
	now := s.d.Now().UTC()
	dep := statestore.Deployment{DeploymentID: depID, Type: string(lockmgr.OpRotateSecrets), Timestamp: now, TriggeredBy: by,
		Status: statestore.DeploymentSuccess, Scope: t.LockKey()}
	rec := lease.Record()
	next := cloneState(st)
	next.Secrets = nil // sealed afresh by to
	changeSet{}.apply(next, dep, rec, by, st.Metadata.GitCommit, st.Metadata.GitBranch, now)
	if lease.Lost() != nil {
		return statestore.Head{}, fmt.Errorf("rotate stopped: %w", lockmgr.ErrLockLost)
	}
	sealed, err := to.Seal(work, next)
	if err != nil {
		return statestore.Head{}, err
	}
	newHead, err := statestore.New(s.d.Store.Backend(), statestore.WithClock(s.d.Now)).Save(work, sealed, head,
		leaseRef(lease))
	if err != nil {
		return statestore.Head{}, err
	}
	s.d.Audit.Info("secrets.rotated", "stack", t.Stack, "environment", t.Env, "serial", newHead.Serial,
		"deployment_id", depID, "lock_id", rec.LockID, "to", to.Provider().Name())
	return newHead, nil
}

package stateops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// ShowStateRequest asks for the verified state of a stack/environment
// (`state show`, docs/commands.md).
type ShowStateRequest struct {
	Target core.Target
	// Serial, when above 0, asks for the history snapshot with that serial
	// instead of the current state.
	Serial int64
	// ShowSecrets: the caller's Store opens secret values, and the reveal is
	// audited as state.secrets_shown once Confirm allows it (docs/secrets.md).
	ShowSecrets bool
	// Confirm is called with the target before secret values are revealed;
	// an error stops the command and is returned as is. Nil: no confirmation.
	Confirm func(core.Target) error
}

// ShowStateResult is a loaded, verified state and where it lives.
type ShowStateResult struct {
	State *statestore.State
	// Location is where the state of the target lives (a path or URL).
	Location string
	// Failure is the newest deployment record when it did not succeed,
	// with the components it failed to create; nil otherwise.
	Failure *Failure
}

// StateDeps are the collaborators of ShowState.
type StateDeps struct {
	// Store opens secret values (statestore.WithSealer) only when the
	// request shows them.
	Store *statestore.Store
	// Audit opens the audit log, only for a reveal of secret values; nil
	// discards the event.
	Audit func() (*slog.Logger, error)
}

// ShowState loads the state of req.Target (or its snapshot of req.Serial),
// verified by the Store. Errors: one naming the location and the deploy to
// run when there is no state; Confirm's; the Store's
// (*statestore.ChecksumError, a Sealer's).
func ShowState(ctx context.Context, d StateDeps, req ShowStateRequest) (*ShowStateResult, error) {
	t := req.Target
	var (
		st  *statestore.State
		err error
	)
	if req.Serial > 0 {
		st, err = d.Store.Snapshot(ctx, t.Stack, t.Env, req.Serial)
	} else {
		st, _, err = d.Store.Load(ctx, t.Stack, t.Env)
	}
	loc := d.Store.Location(t.Stack, t.Env)
	if errors.Is(err, statestore.ErrNotFound) {
		return nil, fmt.Errorf("no state for %s/%s in %s: deploy it first (deployer deploy -s %s -e %s)",
			t.Stack, t.Env, loc, t.Stack, t.Env)
	}
	if err != nil {
		return nil, err
	}
	if req.ShowSecrets {
		if req.Confirm != nil {
			if err := req.Confirm(t); err != nil {
				return nil, err
			}
		}
		if d.Audit != nil {
			al, err := d.Audit()
			if err != nil {
				return nil, err
			}
			al.Info("state.secrets_shown", "stack", t.Stack, "environment", t.Env, "serial", req.Serial)
		}
	}
	return &ShowStateResult{State: st, Location: loc, Failure: lastFailure(st)}, nil
}

// PushRequest asks to write a saved state file as the next serial
// (`state push`, docs/design.md#state-writes).
type PushRequest struct {
	Target core.Target
	// File is a state document, e.g. the deployer-errored-S-E.json a failed
	// state write left behind: PushFile reads it into State, which
	// Ops.Push writes.
	File  string
	State *statestore.State
	// MaxStateSize is the largest document read, in bytes (0: the default
	// backend.max_state_size).
	MaxStateSize int64
	// LockTimeout is how long to wait for a held stack lock (0: fail at once).
	LockTimeout time.Duration
	// Force writes a file that is not the next version of the stored state
	// (another lineage, or a serial not one above the stored one), audited
	// (Ops.Push).
	Force bool
	// Confirm is called with the target and the state read, before any
	// backend is opened; an error stops the push and is returned as is.
	// Nil: no confirmation.
	Confirm func(core.Target, *statestore.State) error
}

// PushResult is what PushFile wrote.
type PushResult struct {
	Target core.Target
	Head   statestore.Head // the new serial's
	// Removed is the errored state file removed once written ("" when
	// the file pushed was another).
	Removed string
}

// PushFile reads req.File (checksums verified), asks Confirm, opens the
// Ops and pushes the state under the stack lock (Ops.Push). Errors:
// the file's (unreadable, too large, corrupt), Confirm's, and Push's.
func PushFile(ctx context.Context, service func(context.Context) (*Ops, error), req PushRequest) (*PushResult, error) {
	st, err := statestore.ReadFile(req.File, req.MaxStateSize)
	if err != nil {
		return nil, err
	}
	if req.Confirm != nil {
		if err := req.Confirm(req.Target, st); err != nil {
			return nil, err
		}
	}
	svc, err := service(ctx)
	if err != nil {
		return nil, err
	}
	req.State = st
	head, err := svc.Push(ctx, req)
	if err != nil {
		return nil, err
	}
	res := &PushResult{Target: req.Target, Head: head}
	if core.IsErroredFile(req.File, req.Target.Stack, req.Target.Env) {
		// Written: the file no longer stands in the way of a deploy
		// (refuseErrored), and its secrets are in the state now.
		if err := core.RemoveErrored(req.File); err != nil {
			return res, fmt.Errorf("the state was written as serial %d, but %s could not be removed (remove it by hand): %w", head.Serial, req.File, err)
		}
		res.Removed = req.File
	}
	return res, nil
}

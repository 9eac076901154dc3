package stateops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/proc"
	"github.com/deployer-dev/deployer/internal/secrets"
)

// DefaultExecGrace is the time `lock exec` gives its command between SIGTERM
// and SIGKILL (--grace; docs/commands.md#lock-exec).
const DefaultExecGrace = 10 * time.Second

// ExecRequest is one `deployer lock exec` (docs/commands.md#lock-exec).
type ExecRequest struct {
	Key  string   // the lock name: the lock key is custom:Key
	Args []string // the command and its arguments; Args[0] is looked up on PATH
	// LockTimeout is how long to wait for a held lock; 0 fails at once
	// with *lockmgr.HeldError.
	LockTimeout time.Duration
	// SkipIfLocked turns a held lock into ExecResult.Skipped: the command
	// does not run, and that is not an error.
	SkipIfLocked bool
	// Grace is the time between SIGTERM and SIGKILL to the command's process
	// group when the lease is lost or ctx ends (0: SIGKILL at once).
	Grace time.Duration

	Stdin          io.Reader // the command's stdio (nil: /dev/null)
	Stdout, Stderr io.Writer
	// Progress receives deployer's own notes (stderr): why the command is
	// being stopped. Nil discards them.
	Progress io.Writer
}

// ExecResult is what a `lock exec` did.
type ExecResult struct {
	// Skipped is the holder's record when SkipIfLocked found the lock held;
	// the command did not run. Nil otherwise.
	Skipped *lockmgr.Record
	// Lock is the lease's record as acquired (key, lock id, fence).
	Lock lockmgr.Record
	// ExitCode is how the command ended, as a shell reports it (0, its exit
	// status, or 128 + signal: 143 after SIGTERM, 137 after SIGKILL); -1
	// when it did not run or was not waited for.
	ExitCode int
	// ReleaseErr is set when the lease could not be released after the
	// command ended: the record stays until it expires or is broken with
	// `deployer unlock --key NAME --force`. A lease already lost is the
	// error of Exec instead.
	ReleaseErr error
}

// Exec runs req.Args while holding the lock custom:req.Key of LockDeps.Locks, with
// heartbeats (docs/commands.md#lock-exec): it acquires the lock (waiting up to
// req.LockTimeout), starts the command under the supervisor (proc.Cmd: its
// own process group, dying with deployer) with DEPLOYER_LOCK_KEY,
// DEPLOYER_LOCK_ID and DEPLOYER_LOCK_FENCE added to d.Environ's environment
// less the secrets key's variables (proc.Environ), waits for it,
// and releases the lock. When the lease is lost (broken with unlock --force,
// or not renewable) or ctx ends, the command's group gets SIGTERM and, after
// req.Grace, SIGKILL.
//
// The command's exit status is ExecResult.ExitCode, not an error. Errors:
// *lockmgr.HeldError (the lock is held and SkipIfLocked is false), the
// lock backend's, "start CMD: ..." when the command cannot start, an error
// wrapping lockmgr.ErrLockLost when the lease was lost while the command
// ran, or context.Cause(ctx) when ctx ended. The result is non-nil whenever
// the lock was acquired.
// The holder is named from d.Getenv (lockmgr.Holder: user, host, CI run).
func (l *Locking) Exec(ctx context.Context, req ExecRequest) (*ExecResult, error) {
	if len(req.Args) == 0 {
		return nil, errors.New("lock exec: no command to run")
	}
	d := l.d
	// a failed release is ExecResult.ReleaseErr, reported by the caller
	lease, err := d.Locks.Take(ctx, lockmgr.LeaseRequest{Key: lockmgr.CustomKey(req.Key), Op: lockmgr.OpExec, Getenv: d.Getenv,
		Command: secrets.CommandLine(req.Args), Timeout: req.LockTimeout})
	var held *lockmgr.HeldError
	if errors.As(err, &held) && req.SkipIfLocked {
		holder := held.Record
		return &ExecResult{Skipped: &holder, ExitCode: -1}, nil
	}
	if err != nil {
		return nil, err
	}
	rec := lease.Record()
	res := &ExecResult{Lock: rec, ExitCode: -1}

	env := proc.Environ(proc.UserCommand, d.Environ()) // no secrets key unless passed explicitly
	stopped, runErr := runUnderLease(ctx, lease, req, env, res)
	lost := stopped && lease.Lost() != nil
	if relErr := lease.ReleaseBounded(); relErr != nil && !lost {
		res.ReleaseErr = relErr
	}
	switch {
	case lost:
		return res, fmt.Errorf("lock %s was lost while %s ran (broken or taken over): %w", rec.LockKey, req.Args[0], lockmgr.ErrLockLost)
	case ctx.Err() != nil:
		return res, context.Cause(ctx)
	}
	return res, runErr
}

// runUnderLease runs the command of req with env and the DEPLOYER_LOCK_*
// variables until it exits or the lease's context ends (then stopped is
// true), and sets res.ExitCode.
func runUnderLease(ctx context.Context, lease *lockmgr.Holding, req ExecRequest, env []string, res *ExecResult) (stopped bool, err error) {
	progress := cmp.Or(req.Progress, io.Writer(io.Discard))
	rec := res.Lock
	c := proc.Command(lease.Context(), req.Args[0], req.Args[1:]...)
	c.Grace = req.Grace
	c.Stdin, c.Stdout, c.Stderr = req.Stdin, req.Stdout, req.Stderr
	c.Env = append(env[:len(env):len(env)], "DEPLOYER_LOCK_KEY="+rec.LockKey,
		"DEPLOYER_LOCK_ID="+rec.LockID, fmt.Sprintf("DEPLOYER_LOCK_FENCE=%d", rec.Fence))
	c.OnStop = func() {
		stopped = true
		reason := "cancelled"
		if lease.Lost() != nil {
			reason = "the lease was lost"
		}
		fmt.Fprintf(progress, "deployer: %s; sending SIGTERM to %s\n", reason, req.Args[0])
	}
	if err := c.Start(); err != nil {
		if lease.Context().Err() != nil { // ended before the command could start
			return true, err
		}
		return false, fmt.Errorf("start %s: %w", req.Args[0], err)
	}
	exit, err := c.WaitExit() // c.OnStop, if it ran, returned before WaitExit did
	res.ExitCode = exit.Code()
	return stopped, err
}

// WithLeaseTTL applies `lock exec --ttl` to the backend settings b: the
// lease TTL becomes ttl, and a heartbeat interval that would not fit in it
// becomes a third of it (docs/commands.md#lock-exec). ttl <= 0 changes nothing.
func WithLeaseTTL(b *config.Backend, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	b.LockTTL = ttl
	if b.HeartbeatInterval >= ttl {
		b.HeartbeatInterval = ttl / 3
	}
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/proc"
)

// LockExecOptions are the flags of `deployer lock exec`.
type LockExecOptions struct {
	Key          string
	TTL          time.Duration
	LockTimeout  time.Duration
	SkipIfLocked bool
	Grace        time.Duration
	Args         []string
}

// NewCmdLockExec returns `deployer lock exec --key NAME -- CMD [ARGS]` (docs/commands.md#lock-exec):
// CMD runs under the lease custom:NAME with heartbeats.
func NewCmdLockExec(f *Factory, runF func(context.Context, *Factory, *LockExecOptions) error) *cobra.Command {
	opts := &LockExecOptions{}
	cmd := &cobra.Command{
		Use:   "exec --key NAME [flags] -- COMMAND [ARGS...]",
		Short: "Run a command under a lease; its exit code passes through",
		Long: "Runs COMMAND while holding the lock custom:NAME, renewing it with heartbeats. With\n" +
			"--skip-if-locked a held lock exits 0 at once, naming the holder. When the lease is lost,\n" +
			"COMMAND gets SIGTERM and, after --grace, SIGKILL, and deployer exits 3.",
		Example: "  deployer lock exec --key nightly-sync --skip-if-locked -- ./sync.sh --full",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{Msg: "no command to run: deployer lock exec --key NAME -- COMMAND [ARGS...]"}
			}
			if opts.Key == "" {
				return &UsageError{Msg: "--key NAME is required"}
			}
			if err := validateName("lock key", opts.Key); err != nil {
				return err
			}
			if cmd.ArgsLenAtDash() != 0 {
				return &UsageError{Msg: "put the command after --: deployer lock exec --key NAME -- COMMAND [ARGS...]"}
			}
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runLockExec(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Key, "key", "", "lock name; the lock key is custom:NAME")
	cmd.Flags().DurationVar(&opts.TTL, "ttl", 0, "lease TTL (default: backend.lock_ttl)")
	cmd.Flags().DurationVar(&opts.LockTimeout, "lock-timeout", 0, "wait up to DUR for a held lock (0: fail at once)")
	cmd.Flags().BoolVar(&opts.SkipIfLocked, "skip-if-locked", false, "exit 0 at once when the lock is held")
	cmd.Flags().DurationVar(&opts.Grace, "grace", 10*time.Second, "time between SIGTERM and SIGKILL when the lease is lost")
	return cmd
}

func runLockExec(ctx context.Context, f *Factory, opts *LockExecOptions) error {
	cfg, err := optionalConfig(f)
	if err != nil {
		return err
	}
	if opts.TTL > 0 {
		cfg.Backend.LockTTL = opts.TTL
		if cfg.Backend.HeartbeatInterval >= opts.TTL {
			cfg.Backend.HeartbeatInterval = opts.TTL / 3
		}
	}
	m, err := f.Locks(ctx, cfg)
	if err != nil {
		return err
	}
	by, md := lockmgr.Holder(f.Getenv)
	md.Operation, md.Command = "exec", strings.Join(opts.Args, " ")
	lease, err := m.Acquire(ctx, lockmgr.Request{Key: lockmgr.CustomKey(opts.Key), LockedBy: by, Metadata: md, Timeout: opts.LockTimeout})
	var held *lockmgr.HeldError
	if errors.As(err, &held) && opts.SkipIfLocked {
		fmt.Fprintf(f.IO.ErrOut, "skipped: lock %s is held by %s (pid %d on %s, since %s, lock id %s)\n",
			held.Record.LockKey, held.Record.LockedBy, held.Record.Metadata.PID, orDash(held.Record.Metadata.Hostname),
			time.Unix(held.Record.LockedAt, 0).UTC().Format(time.RFC3339), held.Record.LockID)
		return nil
	}
	if err != nil {
		return err
	}
	defer releaseWithin(lease, 5*time.Second)

	c := exec.Command(opts.Args[0], opts.Args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = f.IO.In, childStream(f.IO.Out), childStream(f.IO.ErrOut)
	c.Env = append(os.Environ(), "DEPLOYER_LOCK_KEY="+lease.Record().LockKey,
		"DEPLOYER_LOCK_ID="+lease.Record().LockID, fmt.Sprintf("DEPLOYER_LOCK_FENCE=%d", lease.Record().Fence))
	proc.OwnGroup(c)
	if err := c.Start(); err != nil {
		return fmt.Errorf("start %s: %w", opts.Args[0], err)
	}
	defer proc.Watch(c.Process)()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()

	var waitErr error
	lost := false
	select {
	case waitErr = <-done:
	case <-lease.Context().Done():
		lost = lease.Lost() != nil
		reason := "the lease was lost"
		if !lost {
			reason = "cancelled"
		}
		fmt.Fprintf(f.IO.ErrOut, "deployer: %s; sending SIGTERM to %s\n", reason, opts.Args[0])
		_ = proc.Terminate(c.Process)
		select {
		case waitErr = <-done:
		case <-time.After(opts.Grace):
			_ = proc.Kill(c.Process)
			waitErr = <-done
		}
	}
	if lost {
		return fmt.Errorf("lock %s was lost while %s ran (broken or taken over): %w", lease.Record().LockKey, opts.Args[0], lockmgr.ErrLockLost)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) {
		return &ExitCodeError{Code: proc.ExitCode(exitErr)}
	}
	return waitErr
}

func releaseWithin(l *lockmgr.Lease, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = l.Release(ctx)
}

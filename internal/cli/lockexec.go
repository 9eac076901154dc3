package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/termui"
)

// LockExecOptions are the options of `deployer lock exec`.
type LockExecOptions struct {
	IO *termui.IOStreams

	// from argv
	Key          string
	TTL          time.Duration
	LockTimeout  time.Duration
	SkipIfLocked bool
	Grace        time.Duration
	Args         []string

	// Exec is the use case (stateops.Locking.Exec over the configured lock backend,
	// with --ttl applied; bound by NewCmdLockExec, a run test sets a fake).
	Exec func(ctx context.Context, req stateops.ExecRequest) (*stateops.ExecResult, error)
}

// NewCmdLockExec returns `deployer lock exec --key NAME -- CMD [ARGS]` (docs/commands.md#lock-exec):
// CMD runs under the lease custom:NAME with heartbeats. runF replaces
// runLockExec in tests.
func NewCmdLockExec(f *app.Factory, runF func(context.Context, *LockExecOptions) error) *cobra.Command {
	opts := &LockExecOptions{IO: f.IO}
	opts.Exec = func(ctx context.Context, req stateops.ExecRequest) (*stateops.ExecResult, error) {
		cfg, err := app.OptionalConfig(f)
		if err != nil {
			return nil, err
		}
		withTTL := *cfg // the app.Factory's config stays as deployer.yaml says
		stateops.WithLeaseTTL(&withTTL.Backend, opts.TTL)
		m, err := f.Locks(ctx, &withTTL, app.ReadWrite)
		if err != nil {
			return nil, err
		}
		return stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: f.Getenv, Environ: f.Environ}).Exec(ctx, req)
	}
	cmd := &cobra.Command{
		Use:   "exec --key NAME [flags] -- COMMAND [ARGS...]",
		Short: "Run a command under a lease; its exit code passes through",
		Long: heredoc.Doc(`
			Runs COMMAND while holding the lock custom:NAME, renewing it with heartbeats. With
			--skip-if-locked a held lock exits 0 at once, naming the holder. When the lease is lost,
			COMMAND gets SIGTERM and, after --grace, SIGKILL, and deployer exits 3.`),
		Example: "  deployer lock exec --key nightly-sync --skip-if-locked -- ./sync.sh --full",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &exitcode.UsageError{Msg: "no command to run: deployer lock exec --key NAME -- COMMAND [ARGS...]"}
			}
			if opts.Key == "" {
				return &exitcode.UsageError{Msg: "--key NAME is required"}
			}
			if err := app.ValidateName("lock key", opts.Key); err != nil {
				return err
			}
			if cmd.ArgsLenAtDash() != 0 {
				return &exitcode.UsageError{Msg: "put the command after --: deployer lock exec --key NAME -- COMMAND [ARGS...]"}
			}
			opts.Args = args
			return runOr(cmd, opts, runF, runLockExec)
		},
	}
	cmd.Flags().StringVar(&opts.Key, "key", "", "lock name; the lock key is custom:NAME")
	cmd.Flags().DurationVar(&opts.TTL, "ttl", 0, "lease TTL (default: backend.lock_ttl)")
	app.BindLockTimeout(cmd, &opts.LockTimeout)
	cmd.Flags().BoolVar(&opts.SkipIfLocked, "skip-if-locked", false, "exit 0 at once when the lock is held")
	cmd.Flags().DurationVar(&opts.Grace, "grace", stateops.DefaultExecGrace, "time between SIGTERM and SIGKILL when the lease is lost")
	return cmd
}

// runLockExec runs the command through opts.Exec and renders the outcome:
// the holder when skipped, a lease that could not be released, and the
// command's exit code as deployer's.
func runLockExec(ctx context.Context, opts *LockExecOptions) error {
	res, err := opts.Exec(ctx, stateops.ExecRequest{
		Key: opts.Key, Args: opts.Args, LockTimeout: opts.LockTimeout, SkipIfLocked: opts.SkipIfLocked, Grace: opts.Grace,
		Stdin: opts.IO.In, Stdout: termui.ChildStream(opts.IO.Out), Stderr: termui.ChildStream(opts.IO.ErrOut), Progress: opts.IO.ErrOut,
	})
	if res != nil && res.ReleaseErr != nil {
		fmt.Fprintf(opts.IO.ErrOut, "warning: lock %s was not released: %v\n", res.Lock.LockKey, res.ReleaseErr)
	}
	if err != nil {
		return err
	}
	if res.Skipped != nil {
		h := res.Skipped.Printable() // a record anyone with write access to the backend can plant
		fmt.Fprintf(opts.IO.ErrOut, "skipped: lock %s is held by %s (pid %d on %s, since %s, lock id %s)\n",
			h.LockKey, h.LockedBy, h.Metadata.PID, termui.OrDash(h.Metadata.Hostname),
			time.Unix(h.LockedAt, 0).UTC().Format(time.RFC3339), h.LockID)
		return nil
	}
	if res.ExitCode != 0 {
		return &exitcode.ExitCodeError{Code: res.ExitCode}
	}
	return nil
}

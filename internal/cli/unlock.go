package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/termui"
)

// UnlockOptions are the inputs of `deployer unlock`.
type UnlockOptions struct {
	IO *termui.IOStreams
	// from argv
	Target app.TargetFlags
	Key    string // custom:NAME of lock exec
	Force  bool
	LockID string
	Yes    bool
	// Unlock is the use case (stateops.Locking.Unlock on the configured lock backend,
	// with the target resolved against deployer.yaml), bound by
	// NewCmdUnlock; a run test sets a fake. It reports the lock it broke
	// itself (stateops.Reporter: the GitHub Actions job summary).
	Unlock func(context.Context, stateops.UnlockRequest) (*stateops.UnlockResult, error)
}

// NewCmdUnlock returns `deployer unlock --force`; runF replaces runUnlock in
// tests.
func NewCmdUnlock(f *app.Factory, runF func(context.Context, *UnlockOptions) error) *cobra.Command {
	opts := &UnlockOptions{IO: f.IO}
	opts.Unlock = func(ctx context.Context, req stateops.UnlockRequest) (*stateops.UnlockResult, error) {
		cfg, err := app.ProjectConfig(f, "unlock")
		if err != nil {
			return nil, err
		}
		if req.Key == "" {
			if req.Target, err = opts.Target.Resolve(cfg); err != nil {
				return nil, err
			}
		}
		l, err := app.Locking(ctx, f, cfg)
		if err != nil {
			return nil, err
		}
		return l.Unlock(ctx, req)
	}
	cmd := &cobra.Command{
		Use:   "unlock",
		Short: "Break a lock (stale, or with its --lock-id)",
		Long: heredoc.Doc(`
			Shows the lock record it will break, asks for confirmation (--yes without a terminal) and deletes
			only that lock id. Breaking an ACTIVE (non-stale) lock needs --lock-id to match.`),
		Example: "  deployer unlock -s user-platform -e production --force\n  deployer unlock -e prod --component user-service/api --force --lock-id 550e8400-... --yes\n  deployer unlock --key nightly-sync --force --lock-id 550e8400-...",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Key != "" {
				if err := app.ValidateName("lock key", opts.Key); err != nil {
					return err
				}
			} else if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			if !opts.Force {
				return &exitcode.UsageError{Msg: "unlock breaks another holder's lock: pass --force to confirm you mean it"}
			}
			return runOr(cmd, opts, runF, runUnlock)
		},
	}
	opts.Target.Bind(cmd, true)
	cmd.Flags().StringVar(&opts.Key, "key", "", "break the lock exec lock custom:NAME instead")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "required: break the lock")
	cmd.Flags().StringVar(&opts.LockID, "lock-id", "", "break only the lock with this id (required for an ACTIVE lock)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// runUnlock shows the lock the use case is about to break, asks (unless
// --yes), and reports what was broken.
func runUnlock(ctx context.Context, opts *UnlockOptions) error {
	req := stateops.UnlockRequest{Key: opts.Key, LockID: opts.LockID}
	req.Confirm = func(s lockmgr.Status) error {
		fmt.Fprintf(opts.IO.ErrOut, "Warning: this will forcefully release the lock.\n")
		termui.PrintRecord(opts.IO.ErrOut, s)
		if opts.Yes {
			return nil
		}
		ok, err := opts.IO.Confirm("Are you sure?")
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("unlock cancelled: the lock was left in place")
		}
		return nil
	}
	req.Broken = func(s lockmgr.Status) {
		rec := s.Record.Printable()
		fmt.Fprintf(opts.IO.Out, "Lock %s (lock id %s, held by %s) released.\n", rec.LockKey, rec.LockID, rec.LockedBy)
	}
	res, err := opts.Unlock(ctx, req)
	var refused *stateops.UnlockRefusedError
	if errors.As(err, &refused) {
		return &exitcode.UsageError{Msg: err.Error()}
	}
	if err != nil {
		return err
	}
	if res.RecordErr != nil {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %v\n", res.RecordErr)
	}
	return nil
}

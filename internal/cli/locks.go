package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/backends"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// StateLocksOptions are the flags of `deployer state locks`.
type StateLocksOptions struct {
	Stack, Env string
	JSON       bool
}

// NewCmdStateLocks returns `deployer state locks`.
func NewCmdStateLocks(f *Factory, runF func(context.Context, *Factory, *StateLocksOptions) error) *cobra.Command {
	opts := &StateLocksOptions{}
	cmd := &cobra.Command{
		Use:   "locks",
		Short: "List who holds which lock, with ACTIVE/STALE/EXPIRED verdicts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.JSON = f.JSON
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runStateLocks(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Stack, "stack", "s", "", "only locks of this stack")
	cmd.Flags().StringVarP(&opts.Env, "environment", "e", "", "only locks of this environment (needs --stack)")
	return cmd
}

// lockJSON is the --json shape of one lock: the record plus the verdict and
// ages in seconds (docs/locking.md).
type lockJSON struct {
	lockmgr.Record
	Level               lockmgr.Level `json:"level"`
	Status              string        `json:"status"`
	AgeSeconds          int64         `json:"age_seconds"`
	HeartbeatAgeSeconds int64         `json:"heartbeat_age_seconds"`
	// PIDNotRunning: the holder ran on this host and its pid is gone.
	PIDNotRunning bool `json:"pid_not_running,omitempty"`
}

func runStateLocks(ctx context.Context, f *Factory, opts *StateLocksOptions) error {
	cfg, err := projectConfig(f, "state locks")
	if err != nil {
		return err
	}
	if opts.Env != "" && opts.Stack == "" {
		opts.Stack = cfg.Stack
	}
	for _, n := range []struct{ what, v string }{{"stack", opts.Stack}, {"environment", opts.Env}} {
		if n.v != "" {
			if err := validateName(n.what, n.v); err != nil {
				return err
			}
		}
	}
	if cfg.Backend.Lock == "none" {
		fmt.Fprintln(f.IO.ErrOut, backends.NoneWarning)
		if opts.JSON {
			return writeJSON(f, map[string]any{"locking_enabled": false, "locks": []any{}})
		}
		fmt.Fprintln(f.IO.Out, "Locking is off (backend.lock: none): no locks are taken or listed.")
		return nil
	}
	m, err := f.Locks(ctx, cfg)
	if err != nil {
		return err
	}
	prefix := ""
	switch {
	case opts.Env != "":
		prefix = lockmgr.StackKey(opts.Stack, opts.Env)
	case opts.Stack != "":
		prefix = "stack:" + opts.Stack + ":env:"
	}
	all, err := m.List(ctx, prefix)
	if err != nil {
		return err
	}
	var locks []lockmgr.Status
	for _, s := range all {
		if opts.Env != "" {
			if pk, ok := lockmgr.ParseKey(s.LockKey); !ok || pk.Env != opts.Env || pk.Stack != opts.Stack {
				continue
			}
		}
		locks = append(locks, s)
		if s.Verdict == lockmgr.Stale {
			f.Metrics(ctx, cfg).StaleDetected(s.LockKey)
		}
	}
	if opts.JSON {
		out := make([]lockJSON, 0, len(locks))
		for _, s := range locks {
			out = append(out, lockJSON{Record: s.Record, Level: s.Level, Status: s.Verdict,
				AgeSeconds: int64(s.Age.Seconds()), HeartbeatAgeSeconds: int64(s.HeartbeatAge.Seconds()), PIDNotRunning: s.HolderGone})
		}
		return writeJSON(f, map[string]any{"locking_enabled": true, "locks": out})
	}
	if len(locks) == 0 {
		fmt.Fprintln(f.IO.Out, "No locks held.")
		return nil
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCK\tLEVEL\tHOLDER\tOPERATION\tHOST\tPID\tAGE\tHEARTBEAT\tSTATUS\tLOCK ID")
	for _, s := range locks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s ago\t%s\t%s\n", s.LockKey, s.Level, s.LockedBy,
			orDash(s.Metadata.Operation), orDash(s.Metadata.Hostname), s.Metadata.PID,
			humanAge(s.Age), humanAge(s.HeartbeatAge), verdictText(s.Verdict, s.HolderGone), s.LockID)
	}
	return tw.Flush()
}

// verdictText is the STATUS column: the verdict, and "pid not running" when
// the holder ran on this host and its process is gone.
func verdictText(verdict string, gone bool) string {
	if gone {
		return verdict + " (pid not running)"
	}
	return verdict
}

func humanAge(d time.Duration) string {
	d = d.Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String()
}

// UnlockOptions are the flags of `deployer unlock`.
type UnlockOptions struct {
	Target targetFlags
	Key    string // custom:NAME of lock exec
	Force  bool
	LockID string
	Yes    bool
}

// NewCmdUnlock returns `deployer unlock --force`.
func NewCmdUnlock(f *Factory, runF func(context.Context, *Factory, *UnlockOptions) error) *cobra.Command {
	opts := &UnlockOptions{}
	cmd := &cobra.Command{
		Use:   "unlock",
		Short: "Break a lock (stale, or with its --lock-id)",
		Long: "Shows the lock record it will break, asks for confirmation (--yes without a terminal) and deletes\n" +
			"only that lock id. Breaking an ACTIVE (non-stale) lock needs --lock-id to match.",
		Example: "  deployer unlock -s user-platform -e production --force\n  deployer unlock -e prod --component user-service/api --force --lock-id 550e8400-... --yes\n  deployer unlock --key nightly-sync --force --lock-id 550e8400-...",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Key != "" {
				if err := validateName("lock key", opts.Key); err != nil {
					return err
				}
			} else if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			if !opts.Force {
				return &UsageError{Msg: "unlock breaks another holder's lock: pass --force to confirm you mean it"}
			}
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runUnlock(cmd.Context(), f, opts)
		},
	}
	opts.Target.bind(cmd, true)
	cmd.Flags().StringVar(&opts.Key, "key", "", "break the lock exec lock custom:NAME instead")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "required: break the lock")
	cmd.Flags().StringVar(&opts.LockID, "lock-id", "", "break only the lock with this id (required for an ACTIVE lock)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func runUnlock(ctx context.Context, f *Factory, opts *UnlockOptions) error {
	cfg, err := projectConfig(f, "unlock")
	if err != nil {
		return err
	}
	key := lockmgr.CustomKey(opts.Key)
	var t deploy.Target
	if opts.Key == "" {
		if t, err = opts.Target.resolve(cfg); err != nil {
			return err
		}
		key = t.LockKey()
	}
	m, err := f.Locks(ctx, cfg)
	if err != nil {
		return err
	}
	rec, err := m.Backend().Get(ctx, key)
	if errors.Is(err, lockmgr.ErrNotFound) {
		return fmt.Errorf("no lock is held on %s: nothing to unlock (see deployer state locks)", key)
	}
	if err != nil {
		return err
	}
	verdict := m.Verdict(rec)
	if opts.LockID != "" && opts.LockID != rec.LockID {
		return &UsageError{Msg: fmt.Sprintf("lock %s is held with lock id %s, not %s: nothing was broken (%s is mistyped, or names a holder that no longer holds it); check the id with deployer state locks",
			key, rec.LockID, opts.LockID, opts.LockID)}
	}
	if verdict == lockmgr.Active && opts.LockID == "" {
		return &UsageError{Msg: fmt.Sprintf("lock %s is ACTIVE (heartbeat %s ago, by %s): breaking it needs --lock-id %s",
			key, humanAge(time.Since(time.Unix(rec.LastHeartbeat, 0))), rec.LockedBy, rec.LockID)}
	}
	w := f.IO.ErrOut
	fmt.Fprintf(w, "Warning: this will forcefully release the lock.\n")
	printRecord(w, rec, verdict)
	if !opts.Yes {
		ok, err := f.IO.Confirm("Are you sure?")
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("unlock cancelled: the lock was left in place")
		}
	}
	by, _ := lockmgr.Holder(f.Getenv)
	if err := m.ForceUnlock(ctx, key, rec.LockID, by); err != nil {
		if errors.Is(err, lockmgr.ErrLockLost) {
			return fmt.Errorf("lock %s changed hands while unlocking (lock id %s is gone): nothing was broken; check deployer state locks", key, rec.LockID)
		}
		return err
	}
	fmt.Fprintf(f.IO.Out, "Lock %s (lock id %s, held by %s) released.\n", key, rec.LockID, rec.LockedBy)
	f.summarize(fmt.Sprintf("### %s: %s\n\nBroke lock `%s` (lock id `%s`, held by %s since %s).\n\n",
		f.command, key, key, rec.LockID, mdText(rec.LockedBy), time.Unix(rec.LockedAt, 0).UTC().Format(time.RFC3339)))
	if opts.Key == "" && rec.Metadata.DeploymentID != "" {
		// The broken holder's deployment never finished: record it as
		// abandoned in the history (docs/design.md#abandoned-deployments).
		svc, err := f.Service(ctx, cfg, EngineOptions{})
		if err == nil {
			err = svc.RecordBroken(ctx, t, rec)
		}
		if err != nil {
			fmt.Fprintf(f.IO.ErrOut, "warning: %v\n", err)
		}
	}
	return nil
}

// printRecord writes a lock record for humans (the `state locks` layout of docs/locking.md#verdicts-state-locks).
func printRecord(w interface{ Write([]byte) (int, error) }, rec lockmgr.Record, verdict string) {
	at := func(s int64) string {
		t := time.Unix(s, 0).UTC()
		return fmt.Sprintf("%s (%s ago)", t.Format("2006-01-02 15:04:05 UTC"), humanAge(time.Since(t)))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "  Lock:\t%s\n  Lock ID:\t%s\n  Held by:\t%s\n", rec.LockKey, rec.LockID, rec.LockedBy)
	fmt.Fprintf(tw, "  Operation:\t%s\n  Host / PID:\t%s / %d\n", orDash(rec.Metadata.Operation), orDash(rec.Metadata.Hostname), rec.Metadata.PID)
	if rec.Metadata.DeploymentID != "" {
		fmt.Fprintf(tw, "  Deployment:\t%s\n", rec.Metadata.DeploymentID)
	}
	if rec.Metadata.Command != "" {
		fmt.Fprintf(tw, "  Command:\t%s\n", rec.Metadata.Command)
	}
	fmt.Fprintf(tw, "  Locked at:\t%s\n  Last heartbeat:\t%s\n  Expires at:\t%s\n  Status:\t%s\n",
		at(rec.LockedAt), at(rec.LastHeartbeat), time.Unix(rec.ExpiresAt, 0).UTC().Format("2006-01-02 15:04:05 UTC"),
		verdictText(verdict, lockmgr.HolderGone(rec)))
	_ = tw.Flush()
}

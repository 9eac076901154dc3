package termui

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// LockJSON is the --json shape of one lock: the record plus the verdict and
// ages in seconds (docs/locking.md#verdicts-state-locks).
type LockJSON struct {
	lockmgr.Record
	Level               lockmgr.Level   `json:"level"`
	Status              lockmgr.Verdict `json:"status"`
	AgeSeconds          int64           `json:"age_seconds"`
	HeartbeatAgeSeconds int64           `json:"heartbeat_age_seconds"`
	// PIDNotRunning: the holder ran on this host and its pid is gone.
	PIDNotRunning bool `json:"pid_not_running,omitempty"`
}

func toLockJSON(s lockmgr.Status) LockJSON {
	return LockJSON{Record: s.Record, Level: s.Level, Status: s.Verdict,
		AgeSeconds: int64(s.Age.Seconds()), HeartbeatAgeSeconds: int64(s.HeartbeatAge.Seconds()), PIDNotRunning: s.HolderGone}
}

// waiterJSON is the --json shape of one waiter: its record (lockKey is the
// wait-queue entry's), the key it waits for, its position and wait time.
type waiterJSON struct {
	lockmgr.Record
	Key         string        `json:"key"`
	Level       lockmgr.Level `json:"level"`
	Position    int           `json:"position"`
	WaitSeconds int64         `json:"wait_seconds"`
}

func toWaiterJSON(w lockmgr.Waiter) waiterJSON {
	return waiterJSON{Record: w.Record, Key: w.Key, Level: w.Level, Position: w.Position, WaitSeconds: int64(w.Age.Seconds())}
}

// RenderLocks prints the held locks and the wait queue of `state locks`:
// a table, or JSON with asJSON (docs/locking.md#verdicts-state-locks).
func RenderLocks(ios *IOStreams, res *stateops.LocksResult, asJSON bool) error {
	if res.LockingOff {
		if asJSON {
			return ios.PrintJSON(map[string]any{"locking_enabled": false, "locks": []any{}})
		}
		fmt.Fprintln(ios.Out, "Locking is off (backend.lock: none): no locks are taken or listed.")
		return nil
	}
	if asJSON {
		out := make([]LockJSON, 0, len(res.Locks))
		for _, s := range res.Locks {
			out = append(out, toLockJSON(s))
		}
		waiters := make([]waiterJSON, 0, len(res.Waiters))
		for _, w := range res.Waiters {
			waiters = append(waiters, toWaiterJSON(w))
		}
		return ios.PrintJSON(map[string]any{"locking_enabled": true, "locks": out, "waiters": waiters})
	}
	if len(res.Locks) == 0 {
		fmt.Fprintln(ios.Out, "No locks held.")
		return printWaiters(ios.Out, res.Waiters)
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCK\tLEVEL\tHOLDER\tOPERATION\tHOST\tPID\tAGE\tHEARTBEAT\tSTATUS\tLOCK ID")
	for _, s := range res.Locks {
		rec := s.Record.Printable()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s ago\t%s\t%s\n", rec.LockKey, s.Level, rec.LockedBy,
			OrDash(rec.Metadata.Operation), OrDash(rec.Metadata.Hostname), rec.Metadata.PID,
			humanAge(s.Age), humanAge(s.HeartbeatAge), verdictText(string(s.Verdict), s.HolderGone), rec.LockID)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printWaiters(ios.Out, res.Waiters)
}

// printWaiters writes the wait queue under the locks: each key's waiters in
// the order they will get it, with their wait time.
func printWaiters(w io.Writer, ws []lockmgr.Waiter) error {
	if len(ws) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nWaiting (in the order they will get the lock):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCK\tPOSITION\tWAITER\tOPERATION\tHOST\tPID\tWAITING")
	for _, x := range ws {
		rec := x.Record.Printable()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\n", sanitize.Line(x.Key), x.Position, rec.LockedBy,
			OrDash(rec.Metadata.Operation), OrDash(rec.Metadata.Hostname), rec.Metadata.PID, humanAge(x.Age))
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

// PrintRecord writes a lock and its verdict for humans (the `state locks`
// layout of docs/locking.md#verdicts-state-locks). Ages are the verdict's,
// taken at the Manager's clock; a lock without a verdict has no ages.
func PrintRecord(w io.Writer, s lockmgr.Status) {
	rec := s.Record.Printable()
	at := func(sec int64, age time.Duration) string {
		t := time.Unix(sec, 0).UTC().Format("2006-01-02 15:04:05 UTC")
		if s.Verdict == "" {
			return t
		}
		return fmt.Sprintf("%s (%s ago)", t, humanAge(age))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "  Lock:\t%s\n  Lock ID:\t%s\n  Held by:\t%s\n", rec.LockKey, rec.LockID, rec.LockedBy)
	fmt.Fprintf(tw, "  Operation:\t%s\n  Host / PID:\t%s / %d\n", OrDash(rec.Metadata.Operation), OrDash(rec.Metadata.Hostname), rec.Metadata.PID)
	if rec.Metadata.DeploymentID != "" {
		fmt.Fprintf(tw, "  Deployment:\t%s\n", rec.Metadata.DeploymentID)
	}
	if rec.Metadata.Command != "" {
		fmt.Fprintf(tw, "  Command:\t%s\n", rec.Metadata.Command)
	}
	fmt.Fprintf(tw, "  Locked at:\t%s\n  Last heartbeat:\t%s\n  Expires at:\t%s\n  Status:\t%s\n",
		at(rec.LockedAt, s.Age), at(rec.LastHeartbeat, s.HeartbeatAge), time.Unix(rec.ExpiresAt, 0).UTC().Format("2006-01-02 15:04:05 UTC"),
		verdictText(OrDash(string(s.Verdict)), s.HolderGone))
	_ = tw.Flush()
}

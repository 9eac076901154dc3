package termui

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deployer-dev/deployer/internal/guard"
)

// RenderGuardResult prints what `guard stop` decided, the sharers it
// checked, what became of its lock and its stop command.
func RenderGuardResult(w io.Writer, r *guard.Result) {
	why := map[guard.Decision]string{
		guard.Stopped:             "every other sharer is DOWN",
		guard.DedicatedStopped:    "no sharer other than " + r.As + ", stopped without a lock",
		guard.SkippedSharedActive: "not stopped: still used by " + strings.Join(r.Active(), ", "),
		guard.SkippedLock:         "not stopped: its lock is held, fail safe",
	}[r.Decision]
	if r.DryRun {
		why = "dry run, nothing was run: " + why
	}
	fmt.Fprintf(w, "%s: %s (%s)\n", r.Resource, r.Decision, why)
	if len(r.Sharers) > 0 {
		RenderSharers(w, r.Sharers)
	}
	if l := r.Lock; l != nil {
		switch {
		case l.Holder != nil && !l.Acquired:
			h := l.Holder.Printable()
			fmt.Fprintf(w, "lock %s held by %s (%s, pid %d) since %s", l.Key, h.LockedBy, OrDash(h.Metadata.Operation),
				h.Metadata.PID, time.Unix(l.Holder.LockedAt, 0).UTC().Format(time.RFC3339))
			if !r.DryRun {
				fmt.Fprintf(w, "; gave up after %d retries", l.Retries)
			}
			fmt.Fprintln(w)
		case l.KeptUntil != nil:
			fmt.Fprintf(w, "lock %s (fence %d) kept until %s, so a racing stop cannot run again\n", l.Key, l.Fence, l.KeptUntil.Format(time.RFC3339))
		case l.Released:
			fmt.Fprintf(w, "lock %s (fence %d) released\n", l.Key, l.Fence)
		}
	}
	if s := r.Stop; s != nil {
		fmt.Fprintf(w, "stop command %q exited %d after %.1fs\n", s.Command, s.ExitCode, s.DurationSeconds)
	}
}

// RenderSharers prints the sharers' status as `guard status` shows it.
func RenderSharers(w io.Writer, sts []guard.SharerStatus) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "  APP\tSTATUS\tHTTP\tCHECKED\tURL")
	for _, s := range sts {
		code := "-"
		if s.HTTPCode != nil {
			code = fmt.Sprint(*s.HTTPCode)
		}
		status := string(s.Status)
		if s.Status == guard.Unknown {
			status += " (" + s.Error + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", s.App, status, code, s.Timestamp.Format(time.RFC3339), s.URL)
	}
	tw.Flush()
}

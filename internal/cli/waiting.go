package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// waitEvery is how often a wait for a held lock is reported in a log.
const waitEvery = 30 * time.Second

// waitReporter tells the user about a wait for a held lock
// (docs/locking.md#waiting-for-a-lock): one line when the wait starts (the
// holder, since when, how long deployer will wait), then at most one line
// every 30 s with the time waited and left. On a terminal the progress is
// one line updated in place instead. A new holder gets a new first line.
// Time is the wait's own (WaitEvent.Elapsed, from the Manager's clock).
type waitReporter struct {
	w      io.Writer
	tty    bool
	holder string        // lock id of the holder last described
	last   time.Duration // time waited when the last line was written
	open   bool          // a terminal line is not finished yet
}

func newWaitReporter(w io.Writer, tty bool) *waitReporter {
	return &waitReporter{w: w, tty: tty}
}

func (r *waitReporter) event(ev lockmgr.WaitEvent) {
	now := ev.Elapsed
	if ev.Done {
		if r.open {
			fmt.Fprintln(r.w)
			r.open = false
		}
		r.holder = ""
		return
	}
	if ev.Retrying != nil {
		// One line per failure: the Manager reports each one once.
		if r.open {
			fmt.Fprintln(r.w)
			r.open = false
		}
		fmt.Fprintf(r.w, "lock backend unavailable while acquiring %s, retrying for up to %s: %v\n", ev.Key, roundWait(ev.Left), ev.Retrying)
		r.holder = ""
		return
	}
	if ev.First || ev.Holder.LockID != r.holder {
		if r.open {
			fmt.Fprintln(r.w)
			r.open = false
		}
		h := ev.Holder.Printable()
		fmt.Fprintf(r.w, "waiting for lock %s (up to %s%s): held by %s (%s, pid %d on %s, since %s, lock id %s)\n",
			ev.Key, roundWait(ev.Elapsed+ev.Left), positionText(ev.Position), h.LockedBy, orDash(h.Metadata.Operation), h.Metadata.PID,
			orDash(h.Metadata.Hostname), time.Unix(h.LockedAt, 0).UTC().Format(time.RFC3339), h.LockID)
		r.holder, r.last = h.LockID, now
		return
	}
	status := fmt.Sprintf("still waiting for lock %s held by %s: %s waited, %s left%s", ev.Key, sanitize.Line(ev.Holder.LockedBy),
		roundWait(ev.Elapsed), roundWait(ev.Left), positionText(ev.Position))
	if r.tty {
		fmt.Fprintf(r.w, "\r\033[K%s", status)
		r.open = true
		return
	}
	if now-r.last >= waitEvery {
		fmt.Fprintln(r.w, status)
		r.last = now
	}
}

// positionText is ", position N in the queue" for a queued waiter.
func positionText(pos int) string {
	if pos <= 0 {
		return ""
	}
	return fmt.Sprintf(", position %d in the queue", pos)
}

func roundWait(d time.Duration) time.Duration { return d.Round(time.Second) }

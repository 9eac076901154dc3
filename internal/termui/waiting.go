package termui

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// logEvery is how often a wait for a held lock, or a running step, is
// reported in a log (not a terminal).
const logEvery = 30 * time.Second

// WaitReporter tells the user about a wait for a held lock
// (docs/locking.md#waiting-for-a-lock): one line when the wait starts (the
// holder, since when, how long deployer will wait), then at most one line
// every 30 s with the time waited and left. On a terminal the progress is
// one line updated in place instead. A new holder gets a new first line.
// Time is the wait's own (WaitEvent.Elapsed, from the Manager's clock).
type WaitReporter struct {
	w      io.Writer
	tty    bool
	holder string        // lock id of the holder last described
	last   time.Duration // time waited when the last line was written
	line   statusLine    // the terminal line updated in place
}

// NewWaitReporter returns a WaitReporter writing to w (tty: a terminal).
func NewWaitReporter(w io.Writer, tty bool) *WaitReporter {
	return &WaitReporter{w: w, tty: tty, line: statusLine{w: w}}
}

// Event reports one lockmgr.WaitEvent.
func (r *WaitReporter) Event(ev lockmgr.WaitEvent) {
	now := ev.Elapsed
	if ev.Done {
		r.line.end()
		r.holder = ""
		return
	}
	if ev.Retrying != nil {
		// One line per failure: the Manager reports each one once.
		r.line.end()
		fmt.Fprintf(r.w, "lock backend unavailable while acquiring %s, retrying for up to %s: %v\n", ev.Key, roundWait(ev.Left), ev.Retrying)
		r.holder = ""
		return
	}
	if ev.First || ev.Holder.LockID != r.holder {
		r.line.end()
		h := ev.Holder.Printable()
		fmt.Fprintf(r.w, "waiting for lock %s (up to %s%s): held by %s (%s, pid %d on %s, since %s, lock id %s)\n",
			ev.Key, roundWait(ev.Elapsed+ev.Left), positionText(ev.Position), h.LockedBy, OrDash(h.Metadata.Operation), h.Metadata.PID,
			OrDash(h.Metadata.Hostname), time.Unix(h.LockedAt, 0).UTC().Format(time.RFC3339), h.LockID)
		r.holder, r.last = h.LockID, now
		return
	}
	status := fmt.Sprintf("still waiting for lock %s held by %s: %s waited, %s left%s", ev.Key, sanitize.Line(ev.Holder.LockedBy),
		roundWait(ev.Elapsed), roundWait(ev.Left), positionText(ev.Position))
	if r.tty {
		r.line.draw([]string{status})
		return
	}
	if now-r.last >= logEvery {
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

// statusLine is progress drawn in place on a terminal: a block of lines
// that each draw replaces, the cursor left at the end of its last line. It
// is the one place that rewrites lines (a lock wait, the running steps).
type statusLine struct {
	w     io.Writer
	lines int // lines of the block on screen
}

// draw replaces the block on screen with lines (none: it is erased).
func (s *statusLine) draw(lines []string) {
	fmt.Fprint(s.w, s.erase()+strings.Join(lines, "\n"))
	s.lines = len(lines)
}

// clear erases the block, leaving the cursor where it began.
func (s *statusLine) clear() {
	if s.lines > 0 {
		fmt.Fprint(s.w, s.erase())
		s.lines = 0
	}
}

// erase is what takes the cursor to the start of the block and erases it:
// "\r\033[K" for one line (or none), up and to the end of the screen for more.
func (s *statusLine) erase() string {
	if s.lines <= 1 {
		return "\r\033[K"
	}
	return "\r" + strings.Repeat("\033[1A", s.lines-1) + "\033[J"
}

// end leaves the block on screen and moves to the next line.
func (s *statusLine) end() {
	if s.lines > 0 {
		fmt.Fprintln(s.w)
		s.lines = 0
	}
}

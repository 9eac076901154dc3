package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Run is the CI run a deploy belongs to: one job of the matrix that
// `stacks --matrix` prints (deploy --run-id, docs/many-stacks.md#one-job-per-stack-the-matrix).
// Before it takes its lock the deploy waits, reading only, until every
// Upstream stack has a deployment record of the run; its own record
// carries ID and Attempt.
type Run struct {
	ID string
	// Attempt is the run's attempt (GitHub's GITHUB_RUN_ATTEMPT, 1 and
	// up): a failed record of an earlier attempt is not final, since a
	// re-run of the failed jobs runs that upstream again.
	Attempt int
	// Upstream are the stacks of the run this stack reads, directly or
	// through others (the matrix entry's upstream), in the same
	// environment and state backend as this stack.
	Upstream []string
	// WaitTimeout bounds the wait (0: look once).
	WaitTimeout time.Duration
	// Poll paces the reads of the upstream states; nil is an exponential
	// backoff from 1 s to 10 s with jitter. A pause never reaches past the
	// timeout: the last read is made when it ends.
	Poll backoff.BackOff
	// Sleep waits d or until ctx ends (then its error); nil is a timer.
	// With a fake Deps.Now, tests make a long wait without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}

// UpstreamWait is how the wait for one upstream stack ended.
type UpstreamWait struct {
	Stack string
	// Status is the status of the upstream's deployment record of the run;
	// "" when none came.
	Status       statestore.DeploymentStatus
	DeploymentID string
	Attempt      int
	Waited       time.Duration
	// Reads counts the reads of the upstream's state the wait made.
	Reads int
	// Error is the error the upstream's record of the run holds (why it
	// failed, was cancelled or stopped before it applied anything);
	// "" when none.
	Error string
}

// SkippedError: the deploy did not run because an upstream stack of its run
// did not succeed (Failed) or no record of it came within the wait timeout.
// Nothing was written; exit 7 (docs/exit-codes.md).
type SkippedError struct {
	RunID    string
	Upstream UpstreamWait
	Timeout  time.Duration // set when the wait timed out
}

func (e *SkippedError) Error() string {
	u := e.Upstream
	if u.Status == "" {
		return fmt.Sprintf("skipped: upstream %s has no deployment of run %s after waiting %s, %d read(s) (--wait-timeout %s)",
			u.Stack, e.RunID, u.Waited.Round(time.Second), u.Reads, e.Timeout)
	}
	msg := fmt.Sprintf("skipped: upstream %s %s (deployment %s, run %s attempt %d)", u.Stack, u.Status, u.DeploymentID, e.RunID, u.Attempt)
	if u.Error != "" {
		msg += ": " + firstLine(u.Error)
	}
	return msg
}

// firstLine is s up to its first newline, at most 500 bytes: a reason on
// one line of a skipped job's message.
func firstLine(s string) string {
	s, _, cut := strings.Cut(s, "\n")
	if len(s) > 500 {
		s, cut = s[:500], true
	}
	if cut {
		s += " [...]"
	}
	return s
}

// errPending: an upstream has no final record of the run yet (polled again).
var errPending = errors.New("upstream stacks pending")

// runRecord returns the newest deployment of st made in the run id, if any.
func runRecord(st *statestore.State, id string) (statestore.Deployment, bool) {
	for _, d := range st.DeploymentHistory { // newest first
		if d.RunID == id && (d.Type == "" || d.Type == string(lockmgr.OpDeploy)) {
			return d, true
		}
	}
	return statestore.Deployment{}, false
}

// final reports whether d ends the wait of a job of attempt: success
// always; a failure only when made in this attempt or a later one.
func (r *Run) final(d statestore.Deployment) bool {
	return d.Status == statestore.DeploymentSuccess || d.RunAttempt == 0 || d.RunAttempt >= r.Attempt
}

// stamp joins the run to the deployment record d.
func (r *Run) stamp(d *statestore.Deployment) {
	if r != nil {
		d.RunID, d.RunAttempt = r.ID, r.Attempt
	}
}

// appliedIn reports whether st already records a successful deployment of
// the run: a re-run of the job is then a no-op that writes nothing.
func (r *Run) appliedIn(st *statestore.State) bool {
	if r == nil || st == nil {
		return false
	}
	d, ok := runRecord(st, r.ID)
	return ok && d.Status == statestore.DeploymentSuccess
}

func (r *Run) poll() backoff.BackOff {
	if r.Poll != nil {
		return r.Poll
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval, b.Multiplier, b.RandomizationFactor = time.Second, 10*time.Second, 1.5, 0.2
	return b
}

func (r *Run) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// waitUpstream waits, reading only, until every upstream stack of run in
// env has a final deployment record of the run (docs/many-stacks.md#one-job-per-stack-the-matrix),
// with a line per upstream on the progress stream. It returns how each
// wait ended and *SkippedError when one did not succeed or the timeout
// passed; a read error other than "no state yet" ends the wait with it.
func (s *Service) waitUpstream(ctx context.Context, env string, run *Run) ([]UpstreamWait, error) {
	if run == nil || len(run.Upstream) == 0 {
		return nil, nil
	}
	start := s.c.Now()
	waits := make([]UpstreamWait, len(run.Upstream))
	done := make([]bool, len(run.Upstream))
	for i, u := range run.Upstream {
		waits[i].Stack = u
	}
	fmt.Fprintf(s.c.Progress, "Waiting for %d upstream stack(s) of run %s (attempt %d, up to %s): %s\n",
		len(run.Upstream), run.ID, run.Attempt, run.WaitTimeout, strings.Join(run.Upstream, ", "))
	check := func() error {
		for i := range waits {
			if done[i] {
				continue
			}
			w := &waits[i]
			st, _, err := s.c.Store.Load(ctx, w.Stack, env)
			w.Reads++
			w.Waited = s.c.Now().Sub(start)
			if errors.Is(err, statestore.ErrNotFound) {
				continue
			}
			if err != nil {
				return fmt.Errorf("read the state of upstream %s/%s: %w", w.Stack, env, err)
			}
			d, ok := runRecord(st, run.ID)
			if !ok || !run.final(d) {
				continue
			}
			done[i] = true
			w.Status, w.DeploymentID, w.Attempt, w.Error = d.Status, d.DeploymentID, d.RunAttempt, d.Error
			fmt.Fprintf(s.c.Progress, "Upstream %s: %s (deployment %s, attempt %d) after %.1fs, %d read(s)\n",
				w.Stack, d.Status, d.DeploymentID, d.RunAttempt, w.Waited.Seconds(), w.Reads)
			if d.Status != statestore.DeploymentSuccess {
				return &SkippedError{RunID: run.ID, Upstream: *w}
			}
		}
		for _, ok := range done {
			if !ok {
				return errPending
			}
		}
		return nil
	}
	// The reads go on until the timeout has passed by this process's clock,
	// the last one when it ends: never a pause that would end past it, and
	// never giving up while a pause would still fit (docs/many-stacks.md).
	deadline := start.Add(run.WaitTimeout)
	poll := run.poll()
	poll.Reset()
	for {
		err := check()
		if err != nil && ctx.Err() != nil {
			return waits, fmt.Errorf("waiting for the upstream stacks of run %s: %w", run.ID, ctx.Err())
		}
		if !errors.Is(err, errPending) {
			return waits, err
		}
		left := deadline.Sub(s.c.Now())
		if left <= 0 {
			break
		}
		pause := poll.NextBackOff()
		if pause == backoff.Stop || pause > left {
			pause = left
		}
		if err := run.sleep(ctx, pause); err != nil {
			return waits, fmt.Errorf("waiting for the upstream stacks of run %s: %w", run.ID, err)
		}
	}
	for i, w := range waits {
		if !done[i] {
			fmt.Fprintf(s.c.Progress, "Upstream %s: no deployment of run %s after %.1fs, %d read(s)\n", w.Stack, run.ID, w.Waited.Seconds(), w.Reads)
			return waits, &SkippedError{RunID: run.ID, Upstream: w, Timeout: run.WaitTimeout}
		}
	}
	return waits, nil
}

package deploy

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// waitClock is a fake clock for the wait of deploy --run-id: Sleep moves
// it on at once, and at moves past a mark run that mark's action (an
// upstream job writing its record).
type waitClock struct {
	now   time.Time
	slept []time.Duration
	at    map[time.Duration]func()
	start time.Time
}

func (c *waitClock) Now() time.Time { return c.now }

func (c *waitClock) Sleep(_ context.Context, d time.Duration) error {
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	for mark, f := range c.at {
		if c.now.Sub(c.start) >= mark {
			delete(c.at, mark)
			f()
		}
	}
	return nil
}

// waitService is a Service over a file state store whose clock is c.
func waitService(t *testing.T, c *waitClock) (*Service, *statestore.Store, *bytes.Buffer) {
	t.Helper()
	sb, err := filestate.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	store := statestore.New(sb)
	var progress bytes.Buffer
	return New(Deps{Store: store, Now: c.Now, Progress: &progress}), store, &progress
}

// writeRunRecord saves a state of stack/dev whose history holds d.
func writeRunRecord(t *testing.T, store *statestore.Store, stack string, d statestore.Deployment) {
	t.Helper()
	st := statestore.NewState(stack, "dev")
	st.Serial = 1
	d.Serial = 1
	st.DeploymentHistory = []statestore.Deployment{d}
	if _, err := store.Save(context.Background(), st, statestore.Head{}, nil); err != nil {
		t.Fatal(err)
	}
}

// The wait for an upstream stack lasts the whole --wait-timeout, by the
// clock, never giving up a pause early (as backoff's MaxElapsedTime did, 6
// to 10 s before the end), and its message says how long it waited.
func TestRunWaitLastsTheWholeTimeoutAndSaysHowLong(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := &waitClock{now: start, start: start}
	svc, _, progress := waitService(t, c)
	run := &Run{ID: "42", Attempt: 1, Upstream: []string{"net"}, WaitTimeout: 90 * time.Minute, Sleep: c.Sleep}

	waits, err := svc.waitUpstream(context.Background(), "dev", run)
	var skipped *SkippedError
	if !errors.As(err, &skipped) {
		t.Fatalf("wait = %v, want *SkippedError", err)
	}
	if got := c.now.Sub(start); got != 90*time.Minute {
		t.Errorf("the wait ended after %s of the clock, want exactly the timeout, 1h30m0s (pauses %v)", got, c.slept)
	}
	if w := waits[0]; w.Waited != 90*time.Minute || w.Reads != len(c.slept)+1 {
		t.Errorf("upstream net: waited %s in %d reads, want 1h30m0s, a read after each of the %d pauses and one first", w.Waited, w.Reads, len(c.slept))
	}
	for _, d := range c.slept {
		if d > 12*time.Second {
			t.Errorf("a pause of %s: the reads are at most 10 s (and 20%% jitter) apart", d)
		}
	}
	if want := "skipped: upstream net has no deployment of run 42 after waiting 1h30m0s, "; !strings.HasPrefix(err.Error(), want) ||
		!strings.HasSuffix(err.Error(), " read(s) (--wait-timeout 1h30m0s)") {
		t.Errorf("message %q, want it to start %q and name the timeout", err, want)
	}
	if !strings.Contains(progress.String(), "Upstream net: no deployment of run 42 after 5400.0s") {
		t.Errorf("progress:\n%s", progress)
	}
}

// An upstream that records a failure of the run, with its reason, ends the
// wait at the next read: the skipped job names the upstream and why.
func TestRunWaitStopsAtAFailedUpstreamAndNamesItsReason(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := &waitClock{now: start, start: start}
	svc, store, _ := waitService(t, c)
	c.at = map[time.Duration]func(){5 * time.Minute: func() {
		writeRunRecord(t, store, "net", statestore.Deployment{DeploymentID: "dep-net", Type: "deploy", Status: statestore.DeploymentFailed,
			RunID: "42", RunAttempt: 1, Error: "denied by policy: no_public_buckets: net/bucket is public\nsecond line"})
	}}
	run := &Run{ID: "42", Attempt: 1, Upstream: []string{"net", "db"}, WaitTimeout: 90 * time.Minute, Sleep: c.Sleep}

	_, err := svc.waitUpstream(context.Background(), "dev", run)
	var skipped *SkippedError
	if !errors.As(err, &skipped) {
		t.Fatalf("wait = %v, want *SkippedError", err)
	}
	if got := c.now.Sub(start); got < 5*time.Minute || got > 5*time.Minute+12*time.Second {
		t.Errorf("the wait ended after %s of the clock, want at the first read after 5m0s", got)
	}
	if want := "skipped: upstream net failed (deployment dep-net, run 42 attempt 1): denied by policy: no_public_buckets: net/bucket is public [...]"; err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
}

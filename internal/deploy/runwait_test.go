package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
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
	return New(Deps{Deps: core.Deps{Store: store, Now: c.Now, Progress: &progress}}), store, &progress
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

// RecordRunFailure writes one deployment of the run for a job that failed
// before it recorded one (failed, or cancelled after an interrupt, with the
// error and the run's id and attempt, nothing else changed), and writes
// nothing, saying why, where it must not: a job skipped for its own
// upstream, an errored state waiting to be pushed.
var shopDev = Target{Stack: "shop", Env: "dev"}

func TestRecordRunFailureWritesOneRecordOrSaysWhyNot(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := &waitClock{now: start, start: start}
	svc, store, progress := waitService(t, c)
	lb, err := filelock.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lb.Close() })
	svc.c.Locks = lockmgr.NewManager(lb, lockmgr.Options{})
	svc.c.Getenv = func(string) string { return "" }
	run := &Run{ID: "42", Attempt: 2}
	req := func(err error) RunFailureRequest {
		return RunFailureRequest{Target: shopDev, Run: run, Err: err}
	}
	history := func() []statestore.Deployment {
		st, _, err := store.Load(context.Background(), shopDev.Stack, shopDev.Env)
		if err != nil {
			t.Fatal(err)
		}
		return st.DeploymentHistory
	}

	if !svc.RecordRunFailure(context.Background(), req(errors.New("plan: outputs.api_uri: no such output\nsecond line"))) {
		t.Fatalf("not recorded:\n%s", progress)
	}
	h := history()
	if len(h) != 1 || h[0].Status != statestore.DeploymentFailed || h[0].RunID != "42" || h[0].RunAttempt != 2 || h[0].Type != "deploy" ||
		h[0].Error != "plan: outputs.api_uri: no such output\nsecond line" || h[0].Serial != 1 || h[0].ResourcesChanged != (statestore.ResourcesChanged{}) {
		t.Errorf("history %+v, want one failed deploy of run 42 attempt 2 with the error, serial 1, no changes", h)
	}
	if !strings.Contains(progress.String(), "Recorded the failure of this deploy for run 42 (deployment "+h[0].DeploymentID+", serial 1)") {
		t.Errorf("progress:\n%s", progress)
	}

	if !svc.RecordRunFailure(context.Background(), req(fmt.Errorf("waiting for the upstream stacks of run 42: %w", context.Canceled))) {
		t.Fatalf("not recorded:\n%s", progress)
	}
	if h = history(); len(h) != 2 || h[0].Status != statestore.DeploymentCancelled || h[0].Serial != 2 {
		t.Errorf("after an interrupt: history %+v, want a cancelled record at serial 2 first", h)
	}

	progress.Reset()
	if svc.RecordRunFailure(context.Background(), req(&SkippedError{RunID: "42", Upstream: UpstreamWait{Stack: "net", Status: statestore.DeploymentFailed}})) || progress.Len() != 0 {
		t.Errorf("a skipped job recorded something or spoke:\n%s", progress)
	}
	if svc.RecordRunFailure(context.Background(), req(&core.PendingErroredError{Path: "deployer-errored-shop-dev.json", Stack: "shop", Env: "dev"})) {
		t.Error("recorded over a pending errored state")
	}
	if want := "warning: could not record the failure of this deploy for run 42: an errored state of the stack must be pushed first"; !strings.Contains(progress.String(), want) ||
		!strings.Contains(progress.String(), "wait until their --wait-timeout") {
		t.Errorf("progress lacks %q:\n%s", want, progress)
	}
	if h = history(); len(h) != 2 {
		t.Errorf("history has %d records, want the 2 written", len(h))
	}
}

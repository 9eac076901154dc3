//go:build unix

package stateops_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// fileLocks returns a Manager over a file lock backend in a temp dir, with a
// short heartbeat so that a broken lease is noticed soon, and the backend.
func fileLocks(t *testing.T) (*lockmgr.Manager, lockmgr.Backend) {
	t.Helper()
	b, err := filelock.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return lockmgr.NewManager(b, lockmgr.Options{TTL: time.Hour, HeartbeatInterval: 20 * time.Millisecond}), b
}

func noHolderEnv(string) string { return "" }

// syncBuffer is safe to read while a process or goroutine writes it.
type syncBuffer = testenv.SyncBuffer

func assertReleased(t *testing.T, b lockmgr.Backend, key string) {
	t.Helper()
	if rec, err := b.Get(context.Background(), key); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("lock %s left behind: %+v, %v", key, rec, err)
	}
}

func TestExecPassesTheExitCodeAndTheLeaseThrough(t *testing.T) {
	for _, c := range []struct {
		script string
		code   int
	}{{"exit 0", 0}, {"exit 7", 7}, {"kill -TERM $$", 143}} {
		m, b := fileLocks(t)
		var out syncBuffer
		d := stateops.LockDeps{Locks: m, Getenv: noHolderEnv, Environ: func() []string { return []string{"PATH=/usr/bin:/bin"} }}
		res, err := stateops.NewLocking(d).Exec(context.Background(), stateops.ExecRequest{
			Key:    "nightly-sync",
			Args:   []string{"sh", "-c", `echo "$DEPLOYER_LOCK_KEY $DEPLOYER_LOCK_ID $DEPLOYER_LOCK_FENCE"; ` + c.script},
			Stdout: &out,
		})
		if err != nil || res.ExitCode != c.code || res.Skipped != nil || res.ReleaseErr != nil {
			t.Fatalf("%q: Exec = %+v, %v; want exit %d and no error", c.script, res, err, c.code)
		}
		want := fmt.Sprintf("custom:nightly-sync %s %d\n", res.Lock.LockID, res.Lock.Fence)
		if got := out.String(); got != want || res.Lock.Fence < 1 {
			t.Errorf("%q: the command saw %q, want %q", c.script, got, want)
		}
		if res.Lock.Metadata.Operation != "exec" || !strings.HasPrefix(res.Lock.Metadata.Command, "sh [2 args, sha256:") {
			t.Errorf("lock metadata = %+v, want operation exec and the program with a digest of its arguments", res.Lock.Metadata)
		}
		assertReleased(t, b, "custom:nightly-sync")
	}
}

func TestExecHeldLock(t *testing.T) {
	m, b := fileLocks(t)
	other, err := m.Acquire(context.Background(), lockmgr.Request{Key: "custom:nightly-sync", LockedBy: "ci@runner"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Release(context.Background()) }()

	run := []string{"sh", "-c", "echo ran"}
	var out syncBuffer
	res, err := stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: noHolderEnv}).Exec(context.Background(), stateops.ExecRequest{Key: "nightly-sync", Args: run, SkipIfLocked: true, Stdout: &out})
	if err != nil || res.Skipped == nil || res.Skipped.LockID != other.Record().LockID || res.Skipped.LockedBy != "ci@runner" {
		t.Errorf("--skip-if-locked: Exec = %+v, %v; want Skipped naming the holder", res, err)
	}
	_, err = stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: noHolderEnv}).Exec(context.Background(), stateops.ExecRequest{Key: "nightly-sync", Args: run, Stdout: &out})
	var held *lockmgr.HeldError
	if !errors.As(err, &held) || held.Record.LockID != other.Record().LockID {
		t.Errorf("without --skip-if-locked: Exec error = %v, want *lockmgr.HeldError naming the holder", err)
	}
	if out.String() != "" {
		t.Errorf("the command ran under a held lock: %q", out.String())
	}
	if rec, err := b.Get(context.Background(), "custom:nightly-sync"); err != nil || rec.LockID != other.Record().LockID {
		t.Errorf("the holder's record changed: %+v, %v", rec, err)
	}
}

// startedExec runs Exec in a goroutine with script as the command and
// returns once the command printed "started", with the lock's record and
// a channel of Exec's outcome.
type execOutcome struct {
	res *stateops.ExecResult
	err error
}

func startedExec(t *testing.T, ctx context.Context, m *lockmgr.Manager, b lockmgr.Backend, grace time.Duration, script string, progress io.Writer) (lockmgr.Record, <-chan execOutcome, *bufio.Scanner) {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pr.Close() })
	done := make(chan execOutcome, 1)
	go func() {
		res, err := stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: noHolderEnv}).Exec(ctx, stateops.ExecRequest{Key: "nightly-sync", Args: []string{"sh", "-c", script},
			Grace: grace, Stdout: pw, Progress: progress})
		pw.Close()
		done <- execOutcome{res, err}
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() || lines.Text() != "started" {
		t.Fatalf("the command printed %q, want started", lines.Text())
	}
	rec, err := b.Get(context.Background(), "custom:nightly-sync")
	if err != nil {
		t.Fatal(err)
	}
	return rec, done, lines
}

const trapTerm = `trap 'echo term; exit 143' TERM; echo started; while :; do sleep 0.05; done`

func TestExecStopsTheCommandWhenTheLeaseIsLost(t *testing.T) {
	m, b := fileLocks(t)
	var progress syncBuffer
	rec, done, lines := startedExec(t, context.Background(), m, b, time.Hour, trapTerm, &progress)
	if err := m.ForceUnlock(context.Background(), rec.LockKey, rec.LockID, "admin"); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || lines.Text() != "term" {
		t.Errorf("the command printed %q, want term (SIGTERM)", lines.Text())
	}
	o := <-done
	if !errors.Is(o.err, lockmgr.ErrLockLost) || !strings.Contains(o.err.Error(), "lock custom:nightly-sync was lost while sh ran") {
		t.Errorf("Exec error = %v, want the lost lease (lockmgr.ErrLockLost)", o.err)
	}
	if o.res == nil || o.res.ExitCode != 143 || o.res.ReleaseErr != nil {
		t.Errorf("Exec result = %+v, want exit 143 and no release error (the loss is the error)", o.res)
	}
	if got, want := progress.String(), "deployer: the lease was lost; sending SIGTERM to sh\n"; got != want {
		t.Errorf("progress = %q, want %q", got, want)
	}
}

func TestExecKillsACommandThatIgnoresSIGTERMAfterTheGrace(t *testing.T) {
	m, b := fileLocks(t)
	rec, done, _ := startedExec(t, context.Background(), m, b, 50*time.Millisecond,
		`trap '' TERM; echo started; while :; do sleep 0.05; done`, io.Discard)
	if err := m.ForceUnlock(context.Background(), rec.LockKey, rec.LockID, "admin"); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if !errors.Is(o.err, lockmgr.ErrLockLost) || o.res.ExitCode != 137 {
		t.Errorf("Exec = %+v, %v; want exit 137 (SIGKILL) and the lost lease", o.res, o.err)
	}
}

func TestExecCancelledStopsTheCommandAndReleases(t *testing.T) {
	m, b := fileLocks(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var progress syncBuffer
	_, done, lines := startedExec(t, ctx, m, b, time.Hour, trapTerm, &progress)
	interrupted := errors.New("interrupt")
	cancel(interrupted)
	if !lines.Scan() || lines.Text() != "term" {
		t.Errorf("the command printed %q, want term (SIGTERM)", lines.Text())
	}
	o := <-done
	if !errors.Is(o.err, interrupted) || o.res.ExitCode != 143 {
		t.Errorf("Exec = %+v, %v; want the context's cause and exit 143", o.res, o.err)
	}
	if got, want := progress.String(), "deployer: cancelled; sending SIGTERM to sh\n"; got != want {
		t.Errorf("progress = %q, want %q", got, want)
	}
	assertReleased(t, b, "custom:nightly-sync")
}

func TestExecCommandThatCannotStart(t *testing.T) {
	m, b := fileLocks(t)
	res, err := stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: noHolderEnv}).Exec(context.Background(), stateops.ExecRequest{Key: "k", Args: []string{"/nonexistent/cmd"}})
	if err == nil || !strings.HasPrefix(err.Error(), "start /nonexistent/cmd: ") || res.ExitCode != -1 {
		t.Errorf("Exec = %+v, %v; want start /nonexistent/cmd: ...", res, err)
	}
	assertReleased(t, b, "custom:k")
}

// failingRelease is the file backend whose Release fails, as an unreachable
// backend would.
type failingRelease struct{ lockmgr.Backend }

var errUnreachable = errors.New("backend unreachable")

func (failingRelease) Release(context.Context, string, string) error { return errUnreachable }

func TestExecReportsAFailedRelease(t *testing.T) {
	_, b := fileLocks(t)
	m := lockmgr.NewManager(failingRelease{b}, lockmgr.Options{})
	res, err := stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: noHolderEnv}).Exec(context.Background(), stateops.ExecRequest{Key: "k", Args: []string{"sh", "-c", "exit 3"}})
	if err != nil || res.ExitCode != 3 || !errors.Is(res.ReleaseErr, errUnreachable) {
		t.Errorf("Exec = %+v, %v; want exit 3 passed through and ReleaseErr set", res, err)
	}
}

// The command starts from d.Environ without the secrets key: a lock exec
// script never sees the state's passphrase unless passed explicitly.
func TestExecCommandGetsTheEnvironmentWithoutTheSecretsKey(t *testing.T) {
	m, _ := fileLocks(t)
	var out syncBuffer
	environ := func() []string {
		return []string{"PATH=/usr/bin:/bin", "TEAM=payments", "DEPLOYER_SECRETS_PASSPHRASE=hunter2", "PULUMI_CONFIG_PASSPHRASE=hunter3"}
	}
	res, err := stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: noHolderEnv, Environ: environ}).Exec(context.Background(), stateops.ExecRequest{
		Key: "k", Args: []string{"sh", "-c", `echo "team=$TEAM secrets=$DEPLOYER_SECRETS_PASSPHRASE$PULUMI_CONFIG_PASSPHRASE key=$DEPLOYER_LOCK_KEY"`}, Stdout: &out})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Exec = %+v, %v", res, err)
	}
	if got, want := out.String(), "team=payments secrets= key=custom:k\n"; got != want {
		t.Errorf("the command printed %q, want %q", got, want)
	}
}

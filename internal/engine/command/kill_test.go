package command

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/proc"
)

// longRunning starts a background `sleep 60` that ignores SIGTERM, writes
// its pid to child.pid, says "ready", and leaves a "finished" marker if it
// ever lives to the end: a Kill that did nothing makes the apply return
// after 60 s with that marker, failing the test rather than hanging it.
const longRunning = `trap '' TERM; sleep 60 & echo $! > child.pid; echo ready; wait; touch finished`

// killedApply is one Apply of a longRunning step in its own directory.
type killedApply struct {
	in      engine.Inputs
	results []engine.Result
	err     error
}

// startApplies runs n longRunning steps as n concurrent Apply calls (as
// deploy does with ConcurrentSteps) and returns once every command runs;
// wait returns once every Apply returned.
func startApplies(t *testing.T, e *Engine, ctx context.Context, n int) (runs []*killedApply, wait func()) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		progress := watching("] ready\n")
		r := &killedApply{in: inputs(t, progress)}
		runs = append(runs, r)
		st := step("web/site"+strconv.Itoa(i), plan.Create, Spec{Create: longRunning}, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.results, r.err = apply(e, ctx, []plan.Step{st}, r.in)
		}()
		<-progress.notify
	}
	return runs, wg.Wait
}

// checkKilled checks that a run's step ended cancelled, with wantErr in its
// error, before its command finished, and that the command's child is gone.
func checkKilled(t *testing.T, r *killedApply, wantErr error) {
	t.Helper()
	if !errors.Is(r.err, wantErr) {
		t.Errorf("Apply error = %v, want %v", r.err, wantErr)
	}
	if len(r.results) != 1 || r.results[0].Status != engine.StatusCancelled {
		t.Errorf("results = %+v, want one cancelled", r.results)
	}
	if exists(join(r.in.Dir, "finished")) {
		t.Error("the command ran to its end: Kill did not stop it")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, join(r.in.Dir, "child.pid"))))
	if err != nil {
		t.Fatalf("child.pid: %v", err)
	}
	if alive(pid) {
		t.Errorf("the command's child %d survived Kill", pid)
	}
}

// alive reports whether pid runs: one exiting (Linux's PF_EXITING in
// /proc/PID/stat's flags) or exited but not yet reaped by its new parent
// (a zombie) does not. The apply's Wait returned only once the child closed
// the stdout it inherited, which a process does while it exits: so it is
// exiting by then, not merely signalled.
func alive(pid int) bool {
	const pfExiting = 0x4
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 7 || f[0] == "Z" || f[0] == "X" {
			return false
		}
		flags, err := strconv.ParseUint(f[6], 10, 64)
		return err != nil || flags&pfExiting == 0
	} else if errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
			return false
		}
	}
	running, _ := proc.Running(pid)
	return running
}

// Kill alone, the context untouched: every running command's process group
// dies at once, each Apply returns its step cancelled, and nothing starts
// afterwards.
func TestKillStopsEveryRunningCommandAtOnce(t *testing.T) {
	e := New(WithGrace(time.Minute)) // long: only Kill can end these in time
	runs, wait := startApplies(t, e, context.Background(), 2)
	e.Kill()
	wait()
	for _, r := range runs {
		checkKilled(t, r, ErrKilled)
	}

	in := inputs(t, &syncBuffer{})
	results, err := apply(e, context.Background(), []plan.Step{step("web/later", plan.Create, Spec{Create: "touch ran"}, nil)}, in)
	if !errors.Is(err, ErrKilled) || len(results) != 0 || exists(join(in.Dir, "ran")) {
		t.Errorf("Apply after Kill = %+v, %v; want ErrKilled and nothing run", results, err)
	}
}

// The second Ctrl-C: the first cancelled the context and sent SIGTERM,
// which the command ignores; Kill ends it at once instead of after the
// grace period.
func TestSecondCtrlCDoesNotWaitForTheGracePeriod(t *testing.T) {
	e := New(WithGrace(10 * time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs, wait := startApplies(t, e, ctx, 1)
	cancel()
	e.Kill()
	wait()
	checkKilled(t, runs[0], context.Canceled)
}

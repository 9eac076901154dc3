//go:build unix

package proc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/proc"
)

// started starts c with its stdout on a pipe and returns the lines the
// command prints, read as they come.
func started(t *testing.T, c *proc.Cmd) <-chan string {
	t.Helper()
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Kill() })
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	return lines
}

// next returns the next line the command printed; the test binary's own
// timeout bounds a command that never prints it.
func next(t *testing.T, lines <-chan string) string {
	t.Helper()
	l, ok := <-lines
	if !ok {
		t.Fatal("the command's output ended early")
	}
	return l
}

func pidOf(t *testing.T, line string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("want a pid, got %q", line)
	}
	return pid
}

// reapedOrGone polls until pid is gone or a zombie: a process killed by
// its group's signal, waiting only for init to reap it.
func reapedOrGone(pid int) {
	for !gone(pid) && !isZombie(pid) {
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCmdExitCodesPassThrough(t *testing.T) {
	for _, c := range []struct {
		script string
		code   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -TERM $$", 143}, {"kill -INT $$", 130}} {
		cmd := proc.Command(context.Background(), "sh", "-c", c.script)
		err := cmd.Run()
		if got := cmd.ExitCode(); got != c.code {
			t.Errorf("%q: ExitCode = %d, want %d (err %v)", c.script, got, c.code, err)
		}
		var ee *exec.ExitError
		if (c.code == 0) != (err == nil) || (c.code != 0 && !errors.As(err, &ee)) {
			t.Errorf("%q: Run = %v, want nil for 0 and an *exec.ExitError otherwise", c.script, err)
		}
	}
	if got := proc.Command(context.Background(), "true").ExitCode(); got != -1 {
		t.Errorf("ExitCode before Wait = %d, want -1", got)
	}
}

func TestCmdStopSendsSIGTERMToTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := proc.Command(ctx, "sh", "-c", "sleep 30 & echo $!; wait")
	c.Grace = time.Hour // SIGTERM alone must end it
	stops := 0
	c.OnStop = func() { stops++ }
	lines := started(t, c)
	grandchild := pidOf(t, next(t, lines))
	cancel()
	if err := c.Wait(); err == nil {
		t.Error("Wait after a stop = nil, want the exit error of the SIGTERM")
	}
	if got := c.ExitCode(); got != 143 {
		t.Errorf("ExitCode = %d, want 143 (128 + SIGTERM)", got)
	}
	if stops != 1 {
		t.Errorf("OnStop ran %d times, want once", stops)
	}
	reapedOrGone(grandchild) // the group's SIGTERM reached it
}

// A group whose leader and background child ignore SIGTERM (the SIGTERM
// itself is TestCmdStopSendsSIGTERMToTheGroup's) dies of SIGKILL: after
// Grace, or when exec's WaitDelay SIGKILLs the leader alone first.
func TestCmdStopEscalatesToSIGKILL(t *testing.T) {
	for _, c := range []struct {
		name             string
		grace, waitDelay time.Duration
	}{
		{"after the grace period", 50 * time.Millisecond, 0},
		{"after exec's WaitDelay", time.Hour, 50 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := proc.Command(ctx, "sh", "-c", `trap '' TERM; sleep 30 & echo $!; wait`)
			cmd.Grace, cmd.WaitDelay = c.grace, c.waitDelay
			lines := started(t, cmd)
			grandchild := pidOf(t, next(t, lines))
			cancel()
			_ = cmd.Wait()
			if got := cmd.ExitCode(); got != 137 {
				t.Errorf("ExitCode = %d, want 137 (128 + SIGKILL)", got)
			}
			reapedOrGone(grandchild) // the group's SIGKILL reached it
		})
	}
}

func TestCmdExitZeroAfterAStopIsNotAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := proc.Command(ctx, "sh", "-c", `trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done`)
	c.Grace = time.Hour
	lines := started(t, c)
	next(t, lines)
	cancel()
	if err := c.Wait(); err != nil || c.ExitCode() != 0 {
		t.Errorf("Wait = %v, ExitCode = %d; want nil and 0: the context, not Wait, says it was stopped", err, c.ExitCode())
	}
}

func TestCmdInterruptReachesTheLeaderOnceAndOnlyKillStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Like the Pulumi CLI: SIGINT starts a graceful cancel that here never
	// ends; its plugin runs in a session (and group) of its own.
	c := proc.Command(ctx, "sh", "-c", `setsid sleep 30 & echo $!
trap 'echo interrupted' INT
echo ready
while :; do sleep 0.05; done`)
	c.Interrupt = syscall.SIGINT
	lines := started(t, c)
	plugin := pidOf(t, next(t, lines))
	next(t, lines) // ready: the trap is set
	cancel()
	if got := next(t, lines); got != "interrupted" {
		t.Fatalf("got %q, want interrupted", got)
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	if got := c.ExitCode(); got != 137 {
		t.Errorf("ExitCode = %d, want 137 (Kill)", got)
	}
	rest, _ := io.ReadAll(chanReader(lines))
	if strings.Contains(string(rest), "interrupted") {
		t.Errorf("the leader got a second SIGINT: %q", rest)
	}
	reapedOrGone(plugin) // Kill reaches descendants in groups of their own
}

func TestCmdStartAfterTheContextEndedStartsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := proc.Command(ctx, "sh", "-c", "exit 0")
	if err := c.Start(); !errors.Is(err, context.Canceled) || c.Process != nil {
		t.Errorf("Start = %v, want context.Canceled and no process", err)
	}
}

// chanReader reads the remaining lines of ch, one per line.
func chanReader(ch <-chan string) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for l := range ch {
			_, _ = io.WriteString(pw, l+"\n")
		}
		_ = pw.Close()
	}()
	return pr
}

// WaitExit gives how a real child ended apart from the error of waiting:
// an exit status or a signal is the command's result, never an error.
func TestCmdWaitExitTellsHowTheCommandEnded(t *testing.T) {
	for _, c := range []struct {
		script       string
		code, status int
		says         string
	}{
		{"exit 0", 0, 0, "exit status 0"},
		{"exit 3", 3, 3, "exit status 3"},
		{"kill -TERM $$", 143, -1, "signal: terminated"},
		{"kill -KILL $$", 137, -1, "signal: killed"},
	} {
		cmd := proc.Command(context.Background(), "sh", "-c", c.script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exit, err := cmd.WaitExit()
		if err != nil || exit.Code() != c.code || exit.Status() != c.status || exit.String() != c.says {
			t.Errorf("%q: WaitExit = (code %d, status %d, %q), %v; want (code %d, status %d, %q), nil",
				c.script, exit.Code(), exit.Status(), exit, err, c.code, c.status, c.says)
		}
		var ee *exec.ExitError
		if werr := exit.Err(); (c.code == 0) != (werr == nil) || (werr != nil && (!errors.As(werr, &ee) || werr.Error() != c.says)) {
			t.Errorf("%q: Exit.Err = %v, want nil for status 0 and an *exec.ExitError saying %q otherwise", c.script, werr, c.says)
		}
	}
}

func TestCmdWaitExitOfACommandThatDidNotRun(t *testing.T) {
	failed := proc.Command(context.Background(), "/nonexistent/cmd")
	if err := failed.Start(); err == nil {
		t.Fatal("Start of /nonexistent/cmd = nil, want an error")
	}
	for name, c := range map[string]*proc.Cmd{
		"not started":     proc.Command(context.Background(), "true"),
		"failed to start": failed,
	} {
		exit, err := c.WaitExit()
		if err == nil || exit.Code() != -1 || exit.Status() != -1 || exit.Err() == nil {
			t.Errorf("%s: WaitExit = (code %d, status %d, Err %v), %v; want code and status -1, an Err and an error",
				name, exit.Code(), exit.Status(), exit.Err(), err)
		}
	}
	if code := (proc.Exit{}).Code(); code != -1 {
		t.Errorf("the zero Exit's Code = %d, want -1", code)
	}
}

// A background child holding the output open past WaitDelay is the error
// of waiting (ErrWaitDelay), not of the leader, which exited 0.
func TestCmdWaitExitReportsWaitDelay(t *testing.T) {
	var out strings.Builder
	c := proc.Command(context.Background(), "sh", "-c", "sleep 300 & echo $!")
	c.Stdout = &out // a pipe the background sleep inherits
	c.WaitDelay = 50 * time.Millisecond
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exit, err := c.WaitExit()
	if pid, perr := strconv.Atoi(strings.TrimSpace(out.String())); perr == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if !errors.Is(err, proc.ErrWaitDelay) || exit.Code() != 0 || exit.Err() != nil {
		t.Errorf("WaitExit = (code %d), %v; want code 0 and ErrWaitDelay", exit.Code(), err)
	}
}

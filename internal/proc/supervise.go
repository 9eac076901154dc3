package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// Cmd is a child command under deployer's supervision
// (docs/design.md#child-processes), the one way deployer runs Command
// components, `lock exec` commands, the guard's stop commands, the
// Pulumi CLI and git:
//
//   - it starts as the leader of a process group of its own, so a terminal's
//     Ctrl-C reaches deployer only;
//   - the group dies with deployer, even when deployer is killed with
//     SIGKILL (Linux's parent-death signal and a watchdog process);
//   - when the context given to Command is done, the whole group gets
//     SIGTERM and, Grace later, SIGKILL (or, with Interrupt set, the leader
//     alone gets that signal once);
//   - WaitExit tells how it ended as a shell does (128 + signal), apart
//     from the error of not being able to wait for it.
//
// Set the embedded exec.Cmd's Dir, Env, Stdin, Stdout, Stderr and WaitDelay
// before Start (Env from Environ, the rule of what each class of child
// gets; a nil Env is deployer's environment under the rule of user
// commands, never all of it) (WaitDelay also counts from a stop, so keep it at least
// Grace); use Start, Wait and Run of Cmd, not of the embedded
// exec.Cmd.
type Cmd struct {
	*exec.Cmd

	// Grace is the time between SIGTERM and SIGKILL to the group once the
	// context is done; the SIGKILL is not sent when the leader was waited
	// for before then.
	Grace time.Duration

	// Interrupt, when set, replaces SIGTERM-then-SIGKILL: once the context
	// is done, the leader alone gets this signal, once, and nothing follows
	// but an explicit Kill. The Pulumi CLI takes one SIGINT as "cancel
	// gracefully" and stops its own plugins; a second would mean "stop now".
	Interrupt os.Signal

	// OnStop, when set, is called once when the context ends while the
	// command runs, just before the first signal (to tell the user why).
	OnStop func()

	mu      sync.Mutex
	started bool
	waited  bool
	unwatch func()
	kill    *time.Timer // armed by the stop: SIGKILL to the group after Grace
}

// Command returns the supervised command name with args, stopped when ctx is
// done (see Cmd). The context must not be nil; use context.Background() for
// a command that only Kill stops.
func Command(ctx context.Context, name string, args ...string) *Cmd {
	c := &Cmd{Cmd: exec.CommandContext(ctx, name, args...)}
	ownGroup(c.Cmd)
	c.Cmd.Cancel = c.stop
	return c
}

// Start starts the command in its own process group and puts the group
// under the watchdog. It fails, starting nothing, when the context is
// already done (the context's error) or the command cannot be started.
func (c *Cmd) Start() error {
	if c.Env == nil {
		c.Env = environ()
	}
	if err := c.Cmd.Start(); err != nil {
		return err
	}
	unwatch := watch(c.Process)
	c.mu.Lock()
	c.started, c.unwatch = true, unwatch
	c.mu.Unlock()
	return nil
}

// Wait waits for the leader to exit and its output to be copied (a child
// holding the output open past the leader is what SIGKILL after a stop, or
// WaitDelay, ends), then takes the group off the watchdog. It returns the
// command's own result, never the context's error: nil for exit status 0,
// *exec.ExitError otherwise, or exec.ErrWaitDelay when WaitDelay closed
// pipes a background child held open. Callers tell a stop apart by their
// context.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	// The Cancel hook (c.stop) has returned by now, if it ran at all.
	c.mu.Lock()
	c.waited = true
	kill, unwatch := c.kill, c.unwatch
	c.mu.Unlock()
	if kill != nil {
		kill.Stop()
		// exec.Cmd's WaitDelay, counted from the same stop, SIGKILLs the
		// leader alone: the group follows it, as at the end of Grace.
		if c.ExitCode() == 128+int(syscall.SIGKILL) {
			_ = killGroup(c.Process)
		}
	}
	if unwatch != nil {
		unwatch()
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && c.ProcessState != nil && c.ProcessState.Success() &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil // exit 0 after a stop: the caller's context says it was stopped
	}
	return err
}

// ErrWaitDelay is the error of Wait and WaitExit when the leader exited
// (status 0) but a background child held its output open past WaitDelay,
// and the pipes were closed under it (os/exec's ErrWaitDelay, the same
// value).
var ErrWaitDelay = exec.ErrWaitDelay

// WaitExit waits as Wait does and keeps how the command ended apart from
// whether it could be waited for: a non-zero exit status or a signal is the
// command's result, not an error. It returns the Exit (Exit.Code 3 for
// `exit 3`, 143 when SIGTERM ended it) and a nil error whenever the command
// ran to an end, whatever its status.
// The error is otherwise Wait's: ErrWaitDelay (the Exit is then the
// leader's, status 0), an error copying the command's output, or one of
// not being able to wait for it at all ("exec: not started"; the Exit
// then has no status: Code -1).
func (c *Cmd) WaitExit() (Exit, error) {
	err := c.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
	}
	return c.exit(), err
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// ExitCode is how the command ended, as a shell reports it (Exit.Code):
// -1 before it was waited for.
func (c *Cmd) ExitCode() int { return c.exit().Code() }

func (c *Cmd) exit() Exit { return Exit{state: c.ProcessState} }

// Exit is how a command ended (Cmd.WaitExit): its exit status, or the
// signal that ended it. The zero Exit has neither: the command was not
// started, or not waited for.
type Exit struct {
	state *os.ProcessState
}

// Code is how the command ended, as a shell reports it: its exit status
// (0 to 255), 128 + the signal number when a signal ended it (130 for
// SIGINT, 143 for SIGTERM, 137 for SIGKILL), -1 when the Exit has neither.
func (x Exit) Code() int {
	if x.state == nil {
		return -1
	}
	return exitCode(x.state)
}

// Status is the command's exit status (0 to 255); -1 when a signal ended
// it or the Exit has no status (os.ProcessState.ExitCode).
func (x Exit) Status() int {
	if x.state == nil {
		return -1
	}
	return x.state.ExitCode()
}

// Err is nil when the command exited with status 0. Otherwise it is an
// error whose message is String: an *exec.ExitError, as os/exec reports a
// non-zero exit, or for the zero Exit an error saying there is no status.
func (x Exit) Err() error {
	switch {
	case x.state == nil:
		return errors.New(x.String())
	case x.state.Success():
		return nil
	}
	return &exec.ExitError{ProcessState: x.state}
}

// String says how the command ended in os/exec's words: "exit status 3",
// "signal: terminated"; "no exit status" for the zero Exit.
func (x Exit) String() string {
	if x.state == nil {
		return "no exit status"
	}
	return x.state.String()
}

// Kill sends SIGKILL at once to the group and to the group of every
// descendant (listed with ps(1), or from /proc where there is no ps):
// Pulumi starts its provider plugins in groups of their own. It does nothing before Start or once Wait returned; it may be
// called while another goroutine waits.
func (c *Cmd) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.waited {
		return nil
	}
	return killTree(c.Process)
}

// stop is the exec.Cmd Cancel hook, run once when the context is done while
// the leader runs.
func (c *Cmd) stop() error {
	if c.OnStop != nil {
		c.OnStop()
	}
	if c.Interrupt != nil {
		// Best effort, as a terminal's Ctrl-C: where the signal does not
		// exist (Windows) the command runs on until it ends or Kill.
		_ = c.Process.Signal(c.Interrupt)
		return nil
	}
	c.mu.Lock()
	c.kill = time.AfterFunc(c.Grace, func() { _ = killGroup(c.Process) })
	c.mu.Unlock()
	if err := terminate(c.Process); errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	} else if err != nil {
		return err
	}
	return nil
}

// OutputAtMost starts the command and returns its standard output, read
// up to limit bytes (Stdout must be unset). A command that prints more is
// killed with its process group, and over is true (out then holds its
// first limit+1 bytes, err is nil). Otherwise err is Start's, the read's,
// or Wait's (an *exec.ExitError for an exit status other than 0).
func (c *Cmd) OutputAtMost(limit int64) (out []byte, over bool, err error) {
	pipe, err := c.StdoutPipe()
	if err != nil {
		return nil, false, err
	}
	if err := c.Start(); err != nil {
		return nil, false, err
	}
	out, over, rerr := inputfile.ReadAtMost(pipe, limit)
	if over {
		_ = c.Kill()
	}
	werr := c.Wait()
	if over {
		return out, true, nil
	}
	if rerr != nil {
		return nil, false, rerr
	}
	return out, false, werr
}

//go:build unix

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

// term is deployer running on a pseudo-terminal: stdin, stdout and stderr
// are one terminal, as in an interactive shell.
type term struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	out  *watched
	done chan struct{}
	code int
}

// watched is what the terminal showed; waiters wake at each write and
// when the process's output ends.
type watched struct {
	mu     sync.Mutex
	cond   *sync.Cond
	b      strings.Builder
	closed bool
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	w.cond.Broadcast()
	return len(p), nil
}

func (w *watched) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.cond.Broadcast()
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// until blocks until the output holds cond (true) or has ended (false).
func (w *watched) until(cond func(string) bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for !cond(w.b.String()) {
		if w.closed {
			return false
		}
		w.cond.Wait()
	}
	return true
}

// startTerm starts deployer ARGS... on a terminal of 200 columns.
func (p *project) startTerm(args ...string) *term {
	p.t.Helper()
	cmd := p.command(args...)
	cmd.SysProcAttr = nil // pty.Start makes it a session leader (its own process group)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		p.t.Fatal(err)
	}
	tm := &term{t: p.t, cmd: cmd, ptmx: ptmx, out: &watched{}, done: make(chan struct{})}
	tm.out.cond = sync.NewCond(&tm.out.mu)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			_, _ = tm.out.Write(buf[:n])
			if err != nil { // EIO once the child closed its side
				break
			}
		}
		tm.exited()
	}()
	p.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-tm.done
		ptmx.Close()
	})
	return tm
}

// exited waits for the process and records its exit code.
func (tm *term) exited() {
	err := tm.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		tm.code = ee.ExitCode()
	}
	tm.out.close()
	close(tm.done)
}

// waitFor blocks until the terminal shows s; it fails the test when
// deployer ends first.
func (tm *term) waitFor(s string) {
	tm.t.Helper()
	if !tm.out.until(func(out string) bool { return strings.Contains(out, s) }) {
		tm.t.Fatalf("deployer %v ended without printing %q:\n%s", tm.cmd.Args[1:], s, tm.out)
	}
}

// send types line and Enter.
func (tm *term) send(line string) {
	tm.t.Helper()
	if _, err := tm.ptmx.Write([]byte(line + "\r")); err != nil {
		tm.t.Fatal(err)
	}
}

// wait returns the exit code and everything the terminal showed (carriage
// returns before newlines dropped).
func (tm *term) wait() (int, string) {
	<-tm.done
	return tm.code, strings.ReplaceAll(tm.out.String(), "\r\n", "\n")
}

// startPiped starts deployer ARGS... with stdout and stderr on one pipe, as
// in a CI log; its term sends nothing.
func (p *project) startPiped(args ...string) *term {
	p.t.Helper()
	cmd := p.command(args...)
	tm := &term{t: p.t, cmd: cmd, out: &watched{}, done: make(chan struct{})}
	tm.out.cond = sync.NewCond(&tm.out.mu)
	cmd.Stdout, cmd.Stderr = tm.out, tm.out
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	go tm.exited()
	p.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-tm.done
	})
	return tm
}

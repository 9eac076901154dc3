//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// OwnGroup makes cmd, when started, the leader of a new process group. On
// Linux the leader also gets SIGKILL when deployer dies (Pdeathsig); Watch
// extends that to the whole group.
func OwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

// Terminate sends SIGTERM to the process group led by p (started with
// OwnGroup). It returns kill(2)'s error: syscall.ESRCH when the group is gone.
func Terminate(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGTERM) }

// Kill sends SIGKILL to the process group led by p.
func Kill(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }

// ExitCode is the shell's view of how a child ended: its exit status, or
// 128 + the signal number when a signal killed it (143 for SIGTERM).
func ExitCode(err *exec.ExitError) int {
	if code := err.ExitCode(); code >= 0 {
		return code
	}
	var ws syscall.WaitStatus
	if s, ok := err.Sys().(syscall.WaitStatus); ok {
		ws = s
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return 1
}

// Running reports whether a process with pid exists on this host; known is
// false when that cannot be told (pid <= 0).
func Running(pid int) (running, known bool) {
	if pid <= 0 {
		return false, false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM), true
}

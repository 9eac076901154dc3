//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// ownGroup makes cmd, when started, the leader of a new process group. On
// Linux the leader also gets SIGKILL when deployer dies (Pdeathsig); watch
// extends that to the whole group.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

// terminate sends SIGTERM to the process group led by p (started with
// ownGroup). It returns kill(2)'s error: syscall.ESRCH when the group is gone.
func terminate(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGTERM) }

// killGroup sends SIGKILL to the process group led by p.
func killGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }

// exitCode is the shell's view of how a child ended: its exit status, or
// 128 + the signal number when a signal killed it (143 for SIGTERM).
func exitCode(err *exec.ExitError) int {
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

// killTree sends SIGKILL to the process group led by p and to the process
// group of every descendant of p: children that made groups of their own
// (Pulumi starts each provider plugin in its own group) would otherwise
// outlive p as orphans. Descendants are listed with ps(1) before any signal
// is sent.
func killTree(p *os.Process) error {
	kids := descendants(p.Pid)
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	for _, pid := range kids {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // its group, when it leads one
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return err
}

// descendants returns the pids of every process below pid, from
// `ps -A -o pid=,ppid=`; none when ps fails.
func descendants(pid int) []int {
	out, err := exec.Command("ps", "-A", "-o", "pid=,ppid=").Output()
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		c, err1 := strconv.Atoi(f[0])
		pp, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			children[pp] = append(children[pp], c)
		}
	}
	var all []int
	queue := []int{pid}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range children[cur] {
			all = append(all, c)
			queue = append(queue, c)
		}
	}
	return all
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

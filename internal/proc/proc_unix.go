//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
func exitCode(s *os.ProcessState) int {
	if code := s.ExitCode(); code >= 0 {
		return code
	}
	var ws syscall.WaitStatus
	if s, ok := s.Sys().(syscall.WaitStatus); ok {
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
// outlive p as orphans. Descendants are listed (ps(1) or /proc) before any
// signal is sent.
func killTree(p *os.Process) error {
	kids := descendants(p.Pid)
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	for _, pid := range kids {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // its group, when it leads one
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return err
}

// descendants returns the pids of every process below pid, from the
// process table (processParents); none when it cannot be read.
func descendants(pid int) []int {
	children := map[int][]int{}
	for c, pp := range processParents() {
		children[pp] = append(children[pp], c)
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

// processParents maps every process to its parent, from
// `ps -A -o pid=,ppid=`, else (no ps(1), as in minimal container images)
// from Linux's /proc; nil when neither answers.
func processParents() map[int]int {
	out, err := exec.Command("ps", "-A", "-o", "pid=,ppid=").Output()
	if err != nil {
		return procParents()
	}
	parents := map[int]int{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		c, err1 := strconv.Atoi(f[0])
		pp, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			parents[c] = pp
		}
	}
	return parents
}

// procParents reads the parent of every process from /proc/PID/stat (the
// field after the state, which follows the parenthesised command name); nil
// without /proc.
func procParents() map[int]int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if len(stats) == 0 {
		return nil
	}
	parents := map[int]int{}
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // gone since the listing
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		fields := strings.Fields(s[i+1:])
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if i < 0 || len(fields) < 2 || err1 != nil {
			continue
		}
		if pp, err := strconv.Atoi(fields[1]); err == nil {
			parents[pid] = pp
		}
	}
	return parents
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

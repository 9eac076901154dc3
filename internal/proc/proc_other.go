//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no Unix process groups.
func ownGroup(*exec.Cmd) {}

// terminate ends p at once: there is no SIGTERM to send.
func terminate(p *os.Process) error { return p.Kill() }

// killGroup ends p at once.
func killGroup(p *os.Process) error { return p.Kill() }

// killTree ends p at once (its children are not tracked here).
func killTree(p *os.Process) error { return p.Kill() }

// exitCode is the child's exit status, 1 when it has none.
func exitCode(s *os.ProcessState) int {
	if code := s.ExitCode(); code >= 0 {
		return code
	}
	return 1
}

// Running cannot tell on this platform: known is false.
func Running(pid int) (running, known bool) { return false, false }

// watch does nothing where there are no Unix process groups.
func watch(*os.Process) (unwatch func()) { return func() {} }

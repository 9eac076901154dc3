//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// OwnGroup does nothing where there are no Unix process groups.
func OwnGroup(*exec.Cmd) {}

// Terminate ends p at once: there is no SIGTERM to send.
func Terminate(p *os.Process) error { return p.Kill() }

// Kill ends p at once.
func Kill(p *os.Process) error { return p.Kill() }

// KillTree ends p at once (its children are not tracked here).
func KillTree(p *os.Process) error { return p.Kill() }

// ExitCode is the child's exit status, 1 when it has none.
func ExitCode(err *exec.ExitError) int {
	if code := err.ExitCode(); code >= 0 {
		return code
	}
	return 1
}

// Running cannot tell on this platform: known is false.
func Running(pid int) (running, known bool) { return false, false }

// Watch does nothing where there are no Unix process groups.
func Watch(*os.Process) (unwatch func()) { return func() {} }

//go:build !unix

package pulumiadapter

import (
	"os"
	"os/exec"
)

func ownProcessGroup(*exec.Cmd) {}

func killGroup(p *os.Process) { _ = p.Kill() }

//go:build unix && !linux

package proc

import "syscall"

// setDeathSignal: only Linux has a parent-death signal; the watchdog
// (watch) still stops the group when deployer dies.
func setDeathSignal(*syscall.SysProcAttr) {}

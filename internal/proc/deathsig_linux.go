package proc

import "syscall"

// setDeathSignal asks Linux to SIGKILL the group leader when deployer dies,
// whatever the cause (kill -9 included).
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

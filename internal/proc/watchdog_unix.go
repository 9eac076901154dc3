//go:build unix

package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// watchdogScript keeps the process groups deployer names on its stdin
// ("add PGID", "del PGID"). When its stdin ends (deployer exited or was
// killed, even with SIGKILL) it sends SIGTERM to every group still listed,
// then SIGKILL one second later. It ignores the terminal's signals: a Ctrl-C
// is deployer's to handle.
const watchdogScript = `trap '' INT TERM HUP QUIT PIPE
groups=
while read -r op pg; do
	case $op in
	add) groups="$groups $pg" ;;
	del) n=; for g in $groups; do [ "$g" = "$pg" ] || n="$n $g"; done; groups=$n ;;
	esac
done
[ -n "$groups" ] || exit 0
for g in $groups; do kill -TERM "-$g" 2>/dev/null; done
sleep 1
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
exit 0`

var watchdog struct {
	sync.Mutex
	w      io.WriteCloser
	failed bool
}

// watch makes sure the process group led by p (started with ownGroup) dies
// with deployer: a watchdog process, started with the first group, stops
// every group still listed when deployer exits or is killed. The returned
// function takes the group off the list; call it once the leader was waited
// for. Without sh the watchdog is skipped (the leader still gets Linux's
// parent-death signal).
func watch(p *os.Process) (unwatch func()) {
	if p == nil || !send(fmt.Sprintf("add %d\n", p.Pid)) {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(func() { send(fmt.Sprintf("del %d\n", p.Pid)) }) }
}

func send(line string) bool {
	watchdog.Lock()
	defer watchdog.Unlock()
	if watchdog.w == nil && !watchdog.failed {
		watchdog.w, watchdog.failed = startWatchdog()
	}
	if watchdog.w == nil {
		return false
	}
	if _, err := io.WriteString(watchdog.w, line); err != nil {
		watchdog.w, watchdog.failed = nil, true
		return false
	}
	return true
}

func startWatchdog() (io.WriteCloser, bool) {
	cmd := exec.Command("sh", "-c", watchdogScript)
	// Its own group, so a terminal's Ctrl-C or a group kill of a child
	// never reaches it; no death signal, since it must outlive deployer.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, true
	}
	if err := cmd.Start(); err != nil {
		return nil, true
	}
	go func() { _ = cmd.Wait() }()
	return w, false
}

//go:build unix

package proc_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/proc"
)

// startGroup starts sh, which runs pre, starts a background grandchild, then
// waits for it; it returns the shell and the grandchild's pid.
func startGroup(t *testing.T, pre string) (*exec.Cmd, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", pre+" sleep 30 & echo $! > "+pidFile+"; wait")
	proc.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Kill(cmd.Process) })
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(pidFile)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil {
			return cmd, pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the shell never wrote its child's pid")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d of the group still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTerminateReachesTheWholeGroupAndExitsLikeAShell(t *testing.T) {
	cmd, child := startGroup(t, "")
	if err := proc.Terminate(cmd.Process); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Wait = %v, want an exit error", err)
	}
	if got := proc.ExitCode(ee); got != 128+int(syscall.SIGTERM) {
		t.Errorf("ExitCode = %d, want %d (128 + SIGTERM)", got, 128+int(syscall.SIGTERM))
	}
	waitGone(t, child) // reaped by init once sleep dies of the group's SIGTERM
}

func TestKillEndsAGroupThatIgnoresSIGTERM(t *testing.T) {
	cmd, child := startGroup(t, "trap '' TERM;") // the grandchild inherits the ignored SIGTERM
	_ = proc.Terminate(cmd.Process)
	time.Sleep(200 * time.Millisecond) // had SIGTERM ended it, Wait would say 143
	if err := proc.Kill(cmd.Process); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || proc.ExitCode(ee) != 128+int(syscall.SIGKILL) {
		t.Errorf("Wait = %v, want exit %d (128 + SIGKILL)", err, 128+int(syscall.SIGKILL))
	}
	waitGone(t, child)
}

func TestExitCodePassesTheStatusThrough(t *testing.T) {
	err := exec.Command("sh", "-c", "exit 7").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || proc.ExitCode(ee) != 7 {
		t.Errorf("exit 7 gave %v", err)
	}
}

// A group being watched is stopped when the process that started it dies,
// even by SIGKILL: the helper process below plays deployer.
func TestWatchedGroupDiesWithParent(t *testing.T) {
	if os.Getenv("PROC_TEST_PARENT") == "1" {
		cmd, pid := startGroup(t, "")
		proc.Watch(cmd.Process)
		os.Stdout.WriteString(strconv.Itoa(pid) + "\n")
		select {} // until killed
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestWatchedGroupDiesWithParent$")
	parent.Env = append(os.Environ(), "PROC_TEST_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var line [32]byte
	n, _ := out.Read(line[:])
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("helper printed %q, want the grandchild's pid", line[:n])
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	// Bounded by work, not time: poll until the grandchild is gone; the
	// test binary's own timeout catches a survivor.
	for {
		if running, _ := proc.Running(grandchild); !running {
			return
		}
		if isZombie(grandchild) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isZombie reports a process that exited but was not reaped yet.
func isZombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] == 'Z'
	}
	return false
}

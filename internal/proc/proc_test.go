//go:build unix

package proc_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/proc"
)

func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// A supervised group is stopped when the process that started it dies, even
// by SIGKILL: the helper process below plays deployer.
func TestGroupDiesWithParent(t *testing.T) {
	if os.Getenv("PROC_TEST_PARENT") == "1" {
		c := proc.Command(context.Background(), "sh", "-c", "sleep 30 & echo $!; wait")
		lines := started(t, c)
		os.Stdout.WriteString(next(t, lines) + "\n")
		select {} // until killed
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestGroupDiesWithParent$")
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

package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// setNotDumpable makes the process non-dumpable: /proc/PID/{environ,mem,fd}
// become readable by root alone and ptrace by the same user is refused.
func setNotDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_DUMPABLE: %w", err)
	}
	return nil
}

// hideInitialEnviron overwrites with zero bytes the value of every variable
// hide accepts in the environment block the kernel gave the process (between
// env_start and env_end of /proc/self/stat), through /proc/self/mem. The Go
// runtime keeps its own copy of the environment, so os.Getenv is unchanged.
func hideInitialEnviron(hide func(name string) bool) error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	// Fields after the command's closing parenthesis start at field 3;
	// env_start and env_end are fields 50 and 51 (proc(5)).
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return fmt.Errorf("read /proc/self/stat: no command field")
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 49 {
		return fmt.Errorf("read /proc/self/stat: %d fields, no env_start", len(f)+2)
	}
	start, err1 := strconv.ParseInt(string(f[47]), 10, 64)
	end, err2 := strconv.ParseInt(string(f[48]), 10, 64)
	if err1 != nil || err2 != nil || start <= 0 || end <= start {
		return fmt.Errorf("read /proc/self/stat: env_start %q, env_end %q", f[47], f[48])
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return fmt.Errorf("read the environment block: %w", err)
	}
	off := 0
	for _, entry := range bytes.Split(block, []byte{0}) {
		name, value, ok := bytes.Cut(entry, []byte("="))
		if ok && len(value) > 0 && hide(string(name)) {
			at := start + int64(off+len(name)+1)
			if _, err := mem.WriteAt(make([]byte, len(value)), at); err != nil {
				return fmt.Errorf("overwrite %s in the environment block: %w", name, err)
			}
		}
		off += len(entry) + 1
	}
	return nil
}

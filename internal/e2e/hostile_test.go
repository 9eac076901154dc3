//go:build unix

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// memLimitKB is the virtual memory limit (ulimit -v) the hostile-input runs
// get: a run that expands its input without bound dies instead of taking
// the machine.
const memLimitKB = 3 << 20 // 3 GiB of address space; the Go runtime reserves some

// limited runs deployer under `ulimit -v` and returns its result and its
// peak resident set size in kilobytes. The peak is deployer's own: a small
// Python parent forks it and reads getrusage(RUSAGE_CHILDREN). Measured
// from this process, the child would report at least this test process's
// resident size, which it shares until it execs (Go starts children with
// vfork).
func (p *project) limited(args ...string) (result, int64) {
	p.t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		p.t.Fatalf("the memory-limited runs need python3 on PATH to measure a child's peak memory: %v", err)
	}
	peak := filepath.Join(p.t.TempDir(), "peak")
	sh := exec.Command(py, append([]string{"-c", peakScript, peak, "sh", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, memLimitKB), bin}, args...)...)
	cmd := p.command()
	sh.Dir, sh.Env, sh.SysProcAttr = cmd.Dir, cmd.Env, cmd.SysProcAttr
	var out, errb syncBuffer
	sh.Stdout, sh.Stderr = &out, &errb
	err = sh.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	data, err := os.ReadFile(peak)
	if err != nil {
		p.t.Fatalf("no peak memory recorded: %v\n%s", err, r)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		p.t.Fatal(err)
	}
	if runtime.GOOS == "darwin" {
		kb /= 1024 // bytes there
	}
	return r, kb
}

// peakScript runs argv[2:] and writes the peak resident size of its
// children (ru_maxrss) to argv[1]; it exits with the child's code (128+N
// when killed by signal N, as a shell reports it).
const peakScript = `import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code if code >= 0 else 128 - code)
`

// aliasBombYAML is the 9-level "billion laughs" file of the report, used
// once in a component's config: 9^9 values once expanded.
func aliasBombYAML() string {
	var b strings.Builder
	b.WriteString("stack: bomb\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n      c:\n        kind: Command\n        command: {create: 'true'}\n        config:\n")
	b.WriteString("          l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 9; i++ {
		a := "*l" + strconv.Itoa(i-1)
		fmt.Fprintf(&b, "          l%d: &l%d [%s]\n", i, i, strings.Join([]string{a, a, a, a, a, a, a, a, a}, ", "))
	}
	b.WriteString("          boom: *l8\n")
	return b.String()
}

func TestHostileConfigsFailFastWithinMemory(t *testing.T) {
	p := newProject(t, aliasBombYAML())
	r, rss := p.limited("plan", "-e", "dev")
	t.Logf("alias bomb: exit %d, peak RSS %d KB", r.code, rss)
	if r.code != 1 || !strings.Contains(r.stderr, "deployer.yaml:15: the YAML aliases expand to more than 100000 values by this alias (*l4)") {
		t.Fatalf("the alias bomb must fail at its alias line: %s", r)
	}
	if rss > 100<<10 {
		t.Errorf("peak RSS %d KB, want under 100 MB", rss)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".deployer")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused config touched .deployer: %v", err)
	}

	big := filepath.Join(p.dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 100<<20); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(p.dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero is a device, not a configuration file: pass the path of a regular file"},
		{big, "the configuration file is 100 MiB, over the limit of 4 MiB"},
		{fifo, "is a named pipe (FIFO), not a configuration file"},
	} {
		r, rss := p.limited("plan", "-e", "dev", "--config", c.path)
		t.Logf("%s: exit %d, peak RSS %d KB", c.path, r.code, rss)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("--config %s: want exit 1 and %q: %s", c.path, c.want, r)
		}
		if rss > 100<<10 {
			t.Errorf("--config %s: peak RSS %d KB, want under 100 MB", c.path, rss)
		}
	}

	// Saved plans and state files for state push get the same checks.
	p.write("deployer.yaml", "stack: shop\nenvironments: {dev: {}}\n")
	r = p.mustRun(1, "deploy", "-e", "dev", "--plan", "/dev/zero", "--yes")
	if !strings.Contains(r.stderr, "/dev/zero is a device, not a plan file") {
		t.Errorf("deploy --plan /dev/zero: %s", r)
	}
	r = p.mustRun(1, "state", "push", big, "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "the state file is 100 MiB, over the limit of 64 MiB") {
		t.Errorf("state push of 100 MB: %s", r)
	}
	p.env = append(p.env, "DEPLOYER_MAX_STATE_SIZE=200MiB")
	r = p.mustRun(4, "state", "push", big, "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "corrupt") {
		t.Errorf("with a raised limit the file is read and found not to be a state: %s", r)
	}
}

// slowYAML is a valid deployer.yaml just under the 4 MiB limit made of
// two million tiny values: seconds of parsing (once the bound on values
// is raised).
func slowYAML() string { return tinyValuesYAML(4<<20 - 8) }

// tinyValuesYAML is a valid deployer.yaml of about size bytes, nearly all
// of it one flow list of one-character values.
func tinyValuesYAML(size int) string {
	var b strings.Builder
	b.WriteString("stack: slow\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n      c:\n        kind: Command\n        command: {create: 'true'}\n        config:\n          big: [1")
	for b.Len() < size {
		b.WriteString(",1")
	}
	b.WriteString("]\n")
	return b.String()
}

// rssKB is pid's resident set size in kilobytes (Linux /proc/PID/status).
func rssKB(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func TestSIGTERMEndsSlowLocalWorkWith130(t *testing.T) {
	testenv.RequirePlatform(t, runtime.GOOS == "linux", "reads /proc to know when the parse is under way: Linux only, as CI")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		p := newProject(t, slowYAML())
		p.env = append(p.env, "DEPLOYER_MAX_CONFIG_VALUES=3000000") // past the bound on values, to be slow
		d := p.start("plan", "-e", "dev")
		// Signalled once it is well into parsing (its memory grows with the
		// parse), long after its signal handler is installed.
		for rssKB(d.cmd.Process.Pid) < 100<<10 {
			select {
			case <-d.done:
				t.Fatalf("plan ended before it could be signalled: %s", d.res)
			default:
				time.Sleep(time.Millisecond)
			}
		}
		start := time.Now()
		if err := syscall.Kill(d.cmd.Process.Pid, sig); err != nil {
			t.Fatal(err)
		}
		// The bound is a guard against a hang, not the measure: the exit
		// code says the signal ended the parse (a finished plan exits 0).
		r := d.wait(t, time.Minute)
		t.Logf("%s: exit %d after %s", sig, r.code, time.Since(start).Round(time.Millisecond))
		if r.code != 130 || !strings.Contains(r.stderr, "cancelling") {
			t.Fatalf("%s during a slow parse: want exit 130: %s", sig, r)
		}
		if _, err := os.Stat(filepath.Join(p.dir, ".deployer")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a cancelled parse touched .deployer: %v", err)
		}
	}
}

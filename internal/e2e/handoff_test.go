//go:build unix

package e2e

// Waiters for one lock through the built binary: four `lock exec` started
// together get the lock one after the other, and a storm of processes never
// overlaps or loses an update (docs/locking.md#wait-queue).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
)

var lockKinds = []string{"file", "dynamodb", "s3", "redis", "postgres"}

// lockExecCmd is `deployer lock exec --key KEY --lock-timeout 5m -- sh -c SCRIPT`
// in dir with env.
func lockExecCmd(dir string, env []string, key, script string) *exec.Cmd {
	cmd := exec.Command(bin, "lock", "exec", "--key", key, "--lock-timeout", "5m", "--", "sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "GITHUB_ACTIONS=", "DEPLOYER_BACKEND_STATE=", "DEPLOYER_BACKEND_LOCK="), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// lockDir writes a deployer.yaml on r's backends into a new directory.
func lockDir(tb testing.TB, r *remote) string {
	dir := tb.TempDir()
	yaml := "stack: shop\n" + r.backendYAML("1m", "10s", "30s") + quickstartBody
	if err := os.WriteFile(filepath.Join(dir, "deployer.yaml"), []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// BenchmarkLockHandoff4x1s starts four `lock exec -- sleep 1` of one key
// together and reports how long until the last one ends (s/run; ideal 4 s
// plus one process start).
func BenchmarkLockHandoff4x1s(b *testing.B) {
	for _, kind := range lockKinds {
		b.Run(kind, func(b *testing.B) {
			r := newRemote(b, kind, "file", "", true)
			dir := lockDir(b, r)
			var total time.Duration
			n := 0
			for b.Loop() {
				start := time.Now()
				var wg sync.WaitGroup
				for range 4 {
					cmd := lockExecCmd(dir, r.env, "handoff", "sleep 1")
					wg.Go(func() {
						if out, err := cmd.CombinedOutput(); err != nil {
							b.Errorf("lock exec: %v\n%s", err, out)
						}
					})
				}
				wg.Wait()
				total += time.Since(start)
				n++
			}
			b.ReportMetric(total.Seconds()/float64(n), "s/run")
		})
	}
}

// A storm of `lock exec` processes on one key, on every lock backend: each
// runs a read-modify-write of a counter file and logs its section; no two
// sections overlap and no update is lost. DEPLOYER_STORM_CYCLES sets the
// cycles per process (8 x 250 by hand; a few in `make test`),
// DEPLOYER_STORM_SECTION the seconds each section holds the lock (0.02).
func TestLockExecStorm(t *testing.T) {
	const workers = 8
	cycles := locktest.StormCycles(3)
	for _, kind := range lockKinds {
		t.Run(kind, func(t *testing.T) {
			r := newRemote(t, kind, "file", "", true)
			dir := lockDir(t, r)
			if err := os.WriteFile(filepath.Join(dir, "counter"), []byte("0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			hold := "0.02"
			if v := os.Getenv("DEPLOYER_STORM_SECTION"); v != "" {
				hold = v // seconds, to run the longer storms by hand
			}
			section := `echo "start $(date +%s%N)" >> sections.log; n=$(cat counter); sleep ` + hold + `; echo $((n+1)) > counter; echo "end $(date +%s%N)" >> sections.log`
			var wg sync.WaitGroup
			var mu sync.Mutex
			var longest time.Duration
			for w := range workers {
				wg.Go(func() {
					for c := range cycles {
						start := time.Now()
						if out, err := lockExecCmd(dir, r.env, "storm", section).CombinedOutput(); err != nil {
							t.Errorf("worker %d cycle %d: lock exec: %v\n%s", w, c, err, out)
							return
						}
						mu.Lock()
						longest = max(longest, time.Since(start))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			data, err := os.ReadFile(filepath.Join(dir, "counter"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.TrimSpace(string(data)), strconv.Itoa(workers*cycles); got != want {
				t.Errorf("counter = %s after %d sections: lost updates", got, workers*cycles)
			}
			checkSections(t, filepath.Join(dir, "sections.log"), workers*cycles)
			t.Logf("%s: %d x %d lock exec, longest single run %s", kind, workers, cycles, longest.Round(time.Millisecond))
		})
	}
}

// checkSections reads "start NANOS" / "end NANOS" lines written inside the
// lock and checks they alternate: every section ended before the next began.
func checkSections(t *testing.T, path string, want int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		kind string
		at   int64
	}
	var evs []ev
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("bad line %q in %s", l, path)
		}
		at, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("bad line %q in %s", l, path)
		}
		evs = append(evs, ev{f[0], at})
	}
	// The log is appended in order under the lock; sorting by time must
	// give the same alternation.
	sorted := append([]ev(nil), evs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].at < sorted[j].at })
	if len(evs) != 2*want {
		t.Errorf("%d section lines, want %d", len(evs), 2*want)
	}
	for i, e := range sorted {
		if wantKind := []string{"start", "end"}[i%2]; e.kind != wantKind {
			t.Fatalf("sections overlap: line %d by time is %q, want %q\n%s", i, e.kind, wantKind, fmt.Sprint(sorted))
		}
	}
}

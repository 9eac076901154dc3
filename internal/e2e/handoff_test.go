//go:build unix

package e2e

// Waiters for one lock through the built binary: four `lock exec` started
// together get the lock one after the other, and a storm of processes never
// overlaps or loses an update (docs/locking.md#wait-queue).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// sections overlap, no update is lost, and fences grow with every section.
// DEPLOYER_STORM_CYCLES sets the cycles per process (a few in `make test`),
// DEPLOYER_STORM_SECTION the seconds each section holds the lock (0.02),
// DEPLOYER_STORM_BACKENDS the lock backends (a comma-separated subset);
// DEPLOYER_STORM_PARALLEL=1 runs the backends' storms at once and
// DEPLOYER_STORM_OUT names a directory for one line per run
// (storm-BACKEND.tsv). The waits are logged, not timed against the wall
// clock: scripts/lock-storm.sh runs the 8 x 250 storm and checks its bound
// (docs/locking.md#lock-storms).
func TestLockExecStorm(t *testing.T) {
	const workers = 8
	cycles := locktest.StormCycles(3)
	hold := "0.02"
	if v := os.Getenv("DEPLOYER_STORM_SECTION"); v != "" {
		hold = v // seconds, to run the longer storms by hand
	}
	section, err := strconv.ParseFloat(hold, 64)
	if err != nil || section < 0 {
		t.Fatalf("DEPLOYER_STORM_SECTION=%q: want seconds", hold)
	}
	for _, kind := range stormKinds(t) {
		t.Run(kind, func(t *testing.T) {
			if os.Getenv("DEPLOYER_STORM_PARALLEL") == "1" {
				t.Parallel()
			}
			r := newRemote(t, kind, "file", "", true)
			dir := lockDir(t, r)
			if err := os.WriteFile(filepath.Join(dir, "counter"), []byte("0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// Inside the lock: stamp the start (with the worker, cycle and
			// fence), read-modify-write the counter, stamp the end.
			script := `echo "start $(date +%s%N) $STORM_CYCLE $DEPLOYER_LOCK_FENCE $DEPLOYER_LOCK_ID" >> sections.log; n=$(cat counter); sleep ` + hold +
				`; echo $((n+1)) > counter; echo "end $(date +%s%N) $STORM_CYCLE" >> sections.log`
			runs := make([]stormRun, workers*cycles)
			env := r.env
			audit := ""
			if out := os.Getenv("DEPLOYER_STORM_OUT"); out != "" {
				audit = filepath.Join(out, "audit-"+kind+".jsonl")
				env = append(slices.Clone(env), "DEPLOYER_AUDIT_LOG="+audit)
			}
			began := time.Now()
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for c := range cycles {
						id := w*cycles + c
						cmd := lockExecCmd(dir, append(slices.Clone(env), fmt.Sprintf("STORM_CYCLE=%d", id)), "storm", script)
						runs[id].started = time.Now()
						out, err := cmd.CombinedOutput()
						runs[id].exited = time.Now()
						if err != nil {
							t.Errorf("worker %d cycle %d: lock exec: %v\n%s", w, c, err, out)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(began)
			if t.Failed() {
				return
			}
			data, err := os.ReadFile(filepath.Join(dir, "counter"))
			if err != nil {
				t.Fatal(err)
			}
			lost := 0
			if got, err := strconv.Atoi(strings.TrimSpace(string(data))); err != nil || got != workers*cycles {
				t.Errorf("counter = %q after %d sections: lost updates", strings.TrimSpace(string(data)), workers*cycles)
				lost = workers*cycles - got
			}
			overlaps := checkSections(t, filepath.Join(dir, "sections.log"), runs)
			if out := os.Getenv("DEPLOYER_STORM_OUT"); out != "" {
				writeStormRuns(t, filepath.Join(out, "storm-"+kind+".tsv"), runs, cycles)
			}
			if audit != "" {
				logHandoffs(t, kind, audit, runs)
			}
			st := stormStats(runs)
			bound := 1.2 * float64(workers-1) * section
			t.Logf("STORM backend=%s workers=%d cycles=%d section=%ss longest_wait=%.3fs bound=%.3fs p99_wait=%.3fs mean_wait=%.3fs"+
				" most_sections_waited=%d handoff_mean=%.0fms handoff_p99=%.0fms handoff_max=%.0fms exit_after_section_mean=%.0fms lost_updates=%d overlaps=%d elapsed=%s",
				kind, workers, cycles, hold, st.longest.Seconds(), bound, st.p99.Seconds(), st.mean.Seconds(), st.mostWaited,
				ms(st.gapMean), ms(st.gapP99), ms(st.gapMax), ms(st.tailMean), lost, overlaps, elapsed.Round(time.Second))
		})
	}
}

// stormKinds returns the lock backends of the storm: DEPLOYER_STORM_BACKENDS
// (comma-separated) or all of them.
func stormKinds(t *testing.T) []string {
	v := os.Getenv("DEPLOYER_STORM_BACKENDS")
	if v == "" {
		return lockKinds
	}
	var out []string
	for _, k := range strings.Split(v, ",") {
		if !slices.Contains(lockKinds, k) {
			t.Fatalf("DEPLOYER_STORM_BACKENDS: unknown lock backend %q (want some of %v)", k, lockKinds)
		}
		out = append(out, k)
	}
	return out
}

// stormRun is one `lock exec` of a storm: when its worker started it, when
// its section began and ended (stamped by the command under the lock), when
// it exited, and the fence it held.
type stormRun struct {
	started, exited, begin, end time.Time
	fence                       int64
	lockID                      string
	// acquired and released are the lease's lock.acquired and
	// lock.released in the audit log (zero without one).
	acquired, released time.Time
}

// Wait is the run's wait for the lock, as a user sees it: from starting
// `deployer lock exec` until the command runs under the lock (process start,
// the queue, the acquisition and the command's start included).
func (r stormRun) Wait() time.Duration { return r.begin.Sub(r.started) }

// logHandoffs splits each handoff through the binary, from the audit log's
// lock.released and lock.acquired: from one section's end to its release
// (the command's exit noticed, the release written), from the release to
// the next acquisition (the waiter's wake-up and its write), and from there
// to the next section's start (the lease set up, the command started).
func logHandoffs(t *testing.T, kind, audit string, runs []stormRun) {
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Errorf("audit log: %v", err)
		return
	}
	byID := map[string]*stormRun{}
	for i := range runs {
		byID[runs[i].lockID] = &runs[i]
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Timestamp time.Time `json:"timestamp"`
			Event     string    `json:"event"`
			LockID    string    `json:"lock_id"`
		}
		if json.Unmarshal([]byte(l), &ev) != nil || byID[ev.LockID] == nil {
			continue
		}
		switch ev.Event {
		case "lock.acquired":
			byID[ev.LockID].acquired = ev.Timestamp
		case "lock.released":
			byID[ev.LockID].released = ev.Timestamp
		}
	}
	byBegin := slices.Clone(runs)
	slices.SortFunc(byBegin, func(a, b stormRun) int { return a.begin.Compare(b.begin) })
	var release, wake, start []time.Duration
	for i := 1; i < len(byBegin); i++ {
		prev, next := byBegin[i-1], byBegin[i]
		if prev.released.IsZero() || next.acquired.IsZero() {
			continue
		}
		release = append(release, prev.released.Sub(prev.end))
		wake = append(wake, next.acquired.Sub(prev.released))
		start = append(start, next.begin.Sub(next.acquired))
	}
	stat := func(d []time.Duration) string {
		if len(d) == 0 {
			return "-"
		}
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		slices.Sort(d)
		return fmt.Sprintf("%.1f/%.1f/%.1fms", ms(sum/time.Duration(len(d))), ms(d[len(d)/2]), ms(d[min(len(d)-1, len(d)*99/100)]))
	}
	t.Logf("HANDOFF backend=%s handoffs=%d (mean/median/p99) section_end_to_release=%s release_to_next_acquired=%s acquired_to_section_start=%s",
		kind, len(release), stat(release), stat(wake), stat(start))
}

// writeStormRuns writes one line per run: worker, cycle, fence, the times
// (Unix nanoseconds) it started, its section began and ended and it exited,
// and its wait in seconds.
func writeStormRuns(t *testing.T, path string, runs []stormRun, cycles int) {
	var b strings.Builder
	b.WriteString("worker\tcycle\tfence\tstarted_ns\tbegin_ns\tend_ns\texited_ns\twait_s\n")
	for i, r := range runs {
		fmt.Fprintf(&b, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\n", i/cycles, i%cycles, r.fence,
			r.started.UnixNano(), r.begin.UnixNano(), r.end.UnixNano(), r.exited.UnixNano(), r.Wait().Seconds())
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("DEPLOYER_STORM_OUT: %v", err)
	}
}

type stormSummary struct {
	longest, p99, mean      time.Duration
	gapMean, gapP99, gapMax time.Duration // one section's end to the next one's start
	tailMean                time.Duration // a section's end to its process's exit
	// mostWaited is the most sections others began while one run waited:
	// workers - 1 when the lock goes in arrival order.
	mostWaited int
}

func stormStats(runs []stormRun) stormSummary {
	var s stormSummary
	waits := make([]time.Duration, 0, len(runs))
	byBegin := slices.Clone(runs)
	slices.SortFunc(byBegin, func(a, b stormRun) int { return a.begin.Compare(b.begin) })
	var gaps []time.Duration
	var total, tails time.Duration
	for i, r := range byBegin {
		first, _ := slices.BinarySearchFunc(byBegin, r.started, func(x stormRun, t time.Time) int { return x.begin.Compare(t) })
		s.mostWaited = max(s.mostWaited, i-first)
		waits = append(waits, r.Wait())
		total += r.Wait()
		tails += r.exited.Sub(r.end)
		if i > 0 {
			gaps = append(gaps, r.begin.Sub(byBegin[i-1].end))
		}
	}
	slices.Sort(waits)
	slices.Sort(gaps)
	pct := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[min(len(d)-1, int(p*float64(len(d))))]
	}
	s.longest, s.p99, s.mean = pct(waits, 1), pct(waits, 0.99), total/time.Duration(max(len(runs), 1))
	s.gapP99, s.gapMax = pct(gaps, 0.99), pct(gaps, 1)
	var g time.Duration
	for _, d := range gaps {
		g += d
	}
	s.gapMean = g / time.Duration(max(len(gaps), 1))
	s.tailMean = tails / time.Duration(max(len(runs), 1))
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// checkSections reads the "start NANOS RUN FENCE" / "end NANOS RUN" lines
// written inside the lock into runs and checks that, by time, every section
// ended before the next began, and that fences grew with every section. It
// returns the number of overlaps.
func checkSections(t *testing.T, path string, runs []stormRun) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		kind string
		at   int64
		run  int
	}
	var evs []ev
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			t.Fatalf("bad line %q in %s", l, path)
		}
		at, err1 := strconv.ParseInt(f[1], 10, 64)
		run, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || run < 0 || run >= len(runs) {
			t.Fatalf("bad line %q in %s", l, path)
		}
		switch f[0] {
		case "start":
			if len(f) != 5 {
				t.Fatalf("bad line %q in %s", l, path)
			}
			fence, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil {
				t.Fatalf("bad line %q in %s", l, path)
			}
			runs[run].begin, runs[run].fence, runs[run].lockID = time.Unix(0, at), fence, f[4]
		case "end":
			runs[run].end = time.Unix(0, at)
		}
		evs = append(evs, ev{f[0], at, run})
	}
	if len(evs) != 2*len(runs) {
		t.Errorf("%d section lines, want %d", len(evs), 2*len(runs))
	}
	// The log is appended in order under the lock; sorting by time must
	// give the same alternation, each end closing the section just begun.
	sorted := slices.Clone(evs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].at < sorted[j].at })
	overlaps := 0
	lastFence := int64(-1)
	for i, e := range sorted {
		switch {
		case i%2 == 0 && e.kind != "start", i%2 == 1 && (e.kind != "end" || e.run != sorted[i-1].run):
			overlaps++
			t.Errorf("sections overlap: event %d by time is %s of run %d", i, e.kind, e.run)
		case e.kind == "start":
			if f := runs[e.run].fence; f <= lastFence {
				t.Errorf("fence %d of run %d after fence %d: fences must grow", f, e.run, lastFence)
			} else {
				lastFence = f
			}
		}
	}
	return overlaps
}

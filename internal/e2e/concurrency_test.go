//go:build unix

package e2e

// Reliability across OS processes (docs/locking.md): 8 processes
// x 25 locked read-increment-write cycles on every lock backend, and a holder
// paused with SIGSTOP past its TTL that must not overwrite its successor.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/backends"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// workerEnv carries a workerSpec (JSON) to a child process: this test binary
// re-executed. init dispatches on it before TestMain, so a worker neither
// builds the deployer binary nor runs any test.
const workerEnv = "DEPLOYER_E2E_COUNTER_WORKER"

func init() {
	if spec := os.Getenv(workerEnv); spec != "" {
		os.Exit(counterWorker(spec))
	}
}

// workerSpec is one worker's job.
type workerSpec struct {
	ID          int
	Lock, State string // backend URLs (file URLs absolute)
	Stack, Env  string
	Cycles      int
	Log         string // the shared file critical sections are appended to
}

// counterAddr is the component whose outputs.count the workers increment.
const counterAddr = "counter/value"

// counterWorker waits for its stdin to close (the start signal), then runs
// w.Cycles cycles of: acquire the stack lock (waiting as long as it takes),
// load the state, increment outputs.count, save at serial+1 under the lease,
// append "ID CYCLE ENTER_NS EXIT_NS COUNT FENCE" to w.Log, release. Any error
// ends the worker with exit 1 and the error on stderr.
func counterWorker(raw string) int {
	var w workerSpec
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		fmt.Fprintln(os.Stderr, "worker spec:", err)
		return 2
	}
	ctx := context.Background()
	o := backends.Options{BaseDir: ".", PathStyle: true, LockURL: w.Lock}
	lb, err := backends.OpenLock(ctx, w.Lock, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open lock backend:", err)
		return 1
	}
	defer lb.Close()
	sb, err := backends.OpenState(ctx, w.State, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open state backend:", err)
		return 1
	}
	defer sb.Close()
	// The lease outlives any stall of a loaded machine: no worker dies here,
	// so a lease that expired would only mean a starved heartbeat, and the
	// worker would (rightly) fail on its lost lease. Expiry and takeover
	// have their own tests (TestPausedHolderCannotOverwriteItsSuccessor).
	m := lockmgr.NewManager(lb, lockmgr.Options{TTL: 5 * time.Minute, HeartbeatInterval: time.Second,
		StaleAfter: 10 * time.Second, MaxRetryInterval: 200 * time.Millisecond})
	store := statestore.New(sb)
	log, err := os.OpenFile(w.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	_, _ = io.Copy(io.Discard, os.Stdin)
	for i := range w.Cycles {
		if err := counterCycle(ctx, m, store, w, i, log); err != nil {
			fmt.Fprintf(os.Stderr, "worker %d cycle %d: %v\n", w.ID, i, err)
			return 1
		}
	}
	return 0
}

func counterCycle(ctx context.Context, m *lockmgr.Manager, store *statestore.Store, w workerSpec, i int, log *os.File) (err error) {
	// No lock timeout: the test is bounded by the cycles the workers do, not
	// by a clock that a loaded machine can miss (go test's -timeout ends a hang).
	lease, err := m.Acquire(ctx, lockmgr.Request{Key: lockmgr.StackKey(w.Stack, w.Env), Timeout: time.Duration(math.MaxInt64),
		Metadata: lockmgr.Metadata{Operation: "e2e-counter"}})
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	defer func() {
		if rerr := lease.Release(context.Background()); rerr != nil && err == nil {
			err = fmt.Errorf("release: %w", rerr)
		}
	}()
	enter := time.Now().UnixNano()
	work := lease.Context()
	st, head, err := store.Load(work, w.Stack, w.Env)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	res := st.Resources[counterAddr]
	if res == nil {
		return fmt.Errorf("state serial %d has no %s", st.Serial, counterAddr)
	}
	n, err := strconv.ParseInt(fmt.Sprint(res.Outputs["count"]), 10, 64)
	if err != nil {
		return fmt.Errorf("outputs.count of %s: %w", counterAddr, err)
	}
	n++
	res.Outputs["count"] = n
	rec := lease.Record()
	st.Serial++
	st.Metadata.Fence = rec.Fence
	if _, err := store.Save(work, st, head, &statestore.LockRef{Key: rec.LockKey, LockID: rec.LockID, Fence: rec.Fence}); err != nil {
		return fmt.Errorf("save serial %d: %w", st.Serial, err)
	}
	exit := time.Now().UnixNano()
	// One write of a short line to an O_APPEND file: lines never interleave.
	if _, err := fmt.Fprintf(log, "%d %d %d %d %d %d\n", w.ID, i, enter, exit, n, rec.Fence); err != nil {
		return err
	}
	return nil
}

// section is one logged critical section.
type section struct {
	worker, cycle int
	enter, exit   int64
	count, fence  int64
}

func readSections(t *testing.T, path string) []section {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []section
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s section
		if _, err := fmt.Sscan(sc.Text(), &s.worker, &s.cycle, &s.enter, &s.exit, &s.count, &s.fence); err != nil {
			t.Fatalf("bad line %q in %s: %v", sc.Text(), path, err)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].enter < out[j].enter })
	return out
}

// seedCounter writes the first state of stack/env: counterAddr with count 0.
func seedCounter(t *testing.T, r *remote, stack, env string) statestore.Head {
	t.Helper()
	for _, kv := range r.env { // the in-process backends read the same AWS settings
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sb, err := backends.OpenState(ctx, r.state, backends.Options{PathStyle: true, LockURL: r.lock})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	st := statestore.NewState(stack, env)
	st.Serial = 1
	st.Resources[counterAddr] = &statestore.Resource{Kind: "Command", APIVersion: statestore.APIVersion, Status: "ready",
		DesiredConfig: map[string]any{}, ActualState: map[string]any{}, Outputs: map[string]any{"count": 0}, Dependencies: []string{}}
	head, err := statestore.New(sb).Save(ctx, st, statestore.Head{}, nil)
	if err != nil {
		t.Fatalf("seed state: %v", err)
	}
	return head
}

func loadCounter(t *testing.T, r *remote, stack, env string) (serial, count int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sb, err := backends.OpenState(ctx, r.state, backends.Options{PathStyle: true, LockURL: r.lock})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	st, _, err := statestore.New(sb).Load(ctx, stack, env)
	if err != nil {
		t.Fatalf("load final state: %v", err)
	}
	count, err = strconv.ParseInt(fmt.Sprint(st.Resources[counterAddr].Outputs["count"]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return st.Serial, count
}

// TestEightProcessesCountToTwoHundred runs 8 processes x 25 cycles on
// every lock backend: no lost update, serial +200, no overlapping critical
// sections, fences growing in lock order.
func TestEightProcessesCountToTwoHundred(t *testing.T) {
	const procs, cycles = 8, 25
	for _, c := range []struct{ lock, state string }{
		{"file", "file"}, {"dynamodb", "s3"}, {"s3", "s3"}, {"redis", "file"}, {"postgres", "postgres"},
	} {
		t.Run(c.lock, func(t *testing.T) {
			dir := t.TempDir()
			r := newRemote(t, c.lock, c.state, dir, true)
			start := seedCounter(t, r, "race", "dev")
			logPath := filepath.Join(dir, "sections.log")
			began := time.Now()
			var cmds []*exec.Cmd
			var starts []io.WriteCloser
			var errs []*strings.Builder
			for id := range procs {
				spec, _ := json.Marshal(workerSpec{ID: id, Lock: r.lock, State: r.state, Stack: "race", Env: "dev", Cycles: cycles, Log: logPath})
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Dir = dir
				cmd.Env = append(append(os.Environ(), r.env...), workerEnv+"="+string(spec))
				out := &strings.Builder{}
				cmd.Stdout, cmd.Stderr = out, out
				in, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cmd.Process.Kill() })
				cmds, starts, errs = append(cmds, cmd), append(starts, in), append(errs, out)
			}
			for _, in := range starts {
				_ = in.Close()
			}
			failed := false
			for i, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Errorf("worker %d: %v\n%s", i, err, errs[i])
					failed = true
				}
			}
			t.Logf("%s lock + %s state: %d processes x %d cycles in %s", c.lock, c.state, procs, cycles, time.Since(began).Round(time.Millisecond))
			if failed {
				t.FailNow()
			}
			serial, count := loadCounter(t, r, "race", "dev")
			if count != procs*cycles || serial != start.Serial+procs*cycles {
				t.Errorf("final state: count %d (want %d), serial %d (want %d)", count, procs*cycles, serial, start.Serial+procs*cycles)
			}
			secs := readSections(t, logPath)
			if len(secs) != procs*cycles {
				t.Fatalf("%d critical sections logged, want %d", len(secs), procs*cycles)
			}
			for i, s := range secs {
				if s.count != int64(i+1) {
					t.Errorf("critical section %d (worker %d cycle %d) wrote count %d, want %d: an update was lost or reordered", i, s.worker, s.cycle, s.count, i+1)
				}
				if i == 0 {
					continue
				}
				prev := secs[i-1]
				if s.enter < prev.exit {
					t.Errorf("critical sections overlap: worker %d cycle %d [%d, %d] and worker %d cycle %d [%d, %d]",
						prev.worker, prev.cycle, prev.enter, prev.exit, s.worker, s.cycle, s.enter, s.exit)
				}
				if s.fence <= prev.fence {
					t.Errorf("fence did not grow: worker %d cycle %d got %d after %d", s.worker, s.cycle, s.fence, prev.fence)
				}
			}
		})
	}
}

// pauseConfig is a deployer.yaml of one Command component whose config value
// differs per file; its script waits while the file named gate exists.
func pauseConfig(r *remote, value, gate string) string {
	cmd := "./step.sh api " + gate
	return "stack: shop\n" + r.backendYAML("2s", "300ms", "1s") + `environments:
  dev: {}
services:
  app:
    components:
      api:
        kind: Command
        config: {value: ` + value + `}
        command: {create: "` + cmd + `", update: "` + cmd + `", delete: "true"}
`
}

// TestPausedHolderCannotOverwriteItsSuccessor is the SIGSTOP case: a
// deploy stopped past its lock TTL loses the lock to a second deploy that
// writes; resumed, its state write fails with exit 4 and the second's state
// stays.
func TestPausedHolderCannotOverwriteItsSuccessor(t *testing.T) {
	for _, c := range []struct{ lock, state string }{{"dynamodb", "s3"}, {"s3", "s3"}, {"file", "file"}, {"postgres", "postgres"}} {
		t.Run(c.lock+"+"+c.state, func(t *testing.T) {
			r := newRemote(t, c.lock, c.state, "", true)
			p := newProject(t, pauseConfig(r, "base", "no-gate"))
			p.env = append(p.env, r.env...)
			p.write("step.sh", gateStep)
			p.mustRun(0, "deploy", "-e", "dev", "--yes")
			p.write("first.yaml", pauseConfig(r, "first", "gate"))
			p.write("second.yaml", pauseConfig(r, "second", "no-gate"))
			p.write("gate", "")

			first := p.start("deploy", "--config", "first.yaml", "-e", "dev", "--yes")
			eventually(t, 30*time.Second, "the first deploy to start app/api", func() bool { return len(p.events("start")) == 2 })
			pid := first.cmd.Process.Pid
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped := time.Now()

			second := p.run("deploy", "--config", "second.yaml", "-e", "dev", "--yes", "--lock-timeout", "30s")
			if second.code != 0 {
				t.Fatalf("second deploy should take the expired lock and write: %s", second)
			}
			t.Logf("second deploy took over %s after the SIGSTOP", time.Since(stopped).Round(time.Millisecond))
			if !strings.Contains(second.stderr, "waiting for lock stack:shop:env:dev") {
				t.Errorf("second deploy should have waited for the paused holder:\n%s", second)
			}
			// Serial 2 records the paused deploy as abandoned (its lock
			// expired and was taken over); serial 3 is the second deploy.
			if st := p.remoteState("dev"); st.Serial != 3 || st.Resources["app/api"].DesiredConfig["value"] != "second" {
				t.Fatalf("after the second deploy: serial %d (want 3), config %v", st.Serial, st.Resources["app/api"].DesiredConfig)
			}
			if ab := p.abandonedIn("dev"); len(ab) != 1 || ab[0].Serial != 2 {
				t.Errorf("history should show the paused deploy as abandoned at serial 2: %+v", ab)
			}

			// The paused holder's component finishes while it is stopped;
			// then it resumes and tries to write.
			if err := os.Remove(filepath.Join(p.dir, "gate")); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, "the first deploy's component to finish", func() bool { return len(p.events("end")) == 3 })
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			res := first.wait(t, 60*time.Second)
			if res.code != 4 {
				t.Errorf("resumed holder: want exit 4 (state conflict), got %s", res)
			}
			t.Logf("resumed holder: exit %d: %s", res.code, errorLine(res.stderr))
			st := p.remoteState("dev")
			if st.Serial != 3 || st.Resources["app/api"].DesiredConfig["value"] != "second" {
				t.Errorf("the resumed holder overwrote the state: serial %d, config %v", st.Serial, st.Resources["app/api"].DesiredConfig)
			}
			if snap := p.remoteState("dev", "--serial", "3"); snap.Resources["app/api"].DesiredConfig["value"] != "second" {
				t.Errorf("history snapshot of serial 3 holds %v, want the second deploy's value", snap.Resources["app/api"].DesiredConfig)
			}
			if r.s3 != nil && c.state == "s3" {
				if n := r.s3Snapshots(t)["2"]; n != 1 {
					t.Errorf("%d history snapshots of serial 2 in s3://%s: the lost write must leave none behind", n, r.bucket)
				}
			}
			if locks := p.locks(); len(locks) != 0 {
				t.Errorf("locks left: %+v", locks)
			}
		})
	}
}

// errorLine returns the first line of stderr starting with "Error:".
func errorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Error:") {
			return l
		}
	}
	return stderr
}

package file_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
)

func opener(tb testing.TB, dir string) lockmgr.Backend {
	tb.Helper()
	b, err := file.New(dir)
	if err != nil {
		tb.Fatalf("file.New(%s): %v", dir, err)
	}
	return b
}

func TestConformance(t *testing.T) {
	dir := t.TempDir() // one store, many independent clients
	locktest.Run(t, func(t *testing.T) lockmgr.Backend { return opener(t, dir) })
}

func BenchmarkAcquireRelease(b *testing.B) {
	dir := b.TempDir()
	locktest.Bench(b, func(b *testing.B) lockmgr.Backend { return opener(b, dir) })
}

// Child processes of TestProcessesRace are this test binary re-executed with
// these variables set; TestMain sends them to childMain.
const (
	childDirEnv = "DEPLOYER_FILELOCK_CHILD_DIR"
	childKeyEnv = "DEPLOYER_FILELOCK_CHILD_KEY"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		os.Exit(childMain(dir, os.Getenv(childKeyEnv)))
	}
	os.Exit(m.Run())
}

// childMain waits for its stdin to close (the start signal), tries to take key
// once and prints "won FENCE", or "held LOCKID" with the holder's lockId.
func childMain(dir, key string) int {
	b, err := file.New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Close()
	_, _ = io.Copy(io.Discard, os.Stdin)
	now := time.Now()
	rec := lockmgr.Record{LockKey: key, LockID: uuid.NewString(), LockedBy: fmt.Sprintf("pid-%d", os.Getpid()),
		LockedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix()}
	got, err := b.TryAcquire(context.Background(), rec)
	var held *lockmgr.HeldError
	switch {
	case err == nil:
		fmt.Printf("won %s %d\n", got.LockID, got.Fence)
	case errors.As(err, &held):
		fmt.Printf("held %s\n", held.Record.LockID)
	default:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestProcessesRace starts several OS processes on one directory, releases
// them at once, and checks that exactly one takes the key and the others see
// that one as the holder.
func TestProcessesRace(t *testing.T) {
	const procs = 4
	dir := t.TempDir()
	key := lockmgr.StackKey("shop", "prod")
	var cmds []*exec.Cmd
	var starts []io.WriteCloser
	var outs []*strings.Builder
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childKeyEnv+"="+key)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start child: %v", err)
		}
		cmds, starts, outs = append(cmds, cmd), append(starts, in), append(outs, out)
	}
	for _, in := range starts {
		_ = in.Close() // go
	}
	var winners, holders []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
		sc := bufio.NewScanner(strings.NewReader(outs[i].String()))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 3 && f[0] == "won":
				winners = append(winners, f[1])
			case len(f) == 2 && f[0] == "held":
				holders = append(holders, f[1])
			}
		}
	}
	if len(winners) != 1 || len(holders) != procs-1 {
		t.Fatalf("%d processes won and %d saw the key held, want 1 and %d; outputs: %q", len(winners), len(holders), procs-1, outs)
	}
	for _, h := range holders {
		if h != winners[0] {
			t.Errorf("a loser saw holder %s, want the winner %s", h, winners[0])
		}
	}
	b := opener(t, dir)
	defer b.Close()
	rec, err := b.Get(context.Background(), key)
	if err != nil || rec.LockID != winners[0] {
		t.Errorf("record on disk = %+v, %v; want the winner's lock id %s", rec, err, winners[0])
	}
}

// An 8 MiB file at a lock key (docs/locking.md, "Record size").
func TestOversizedRecordIsHeldAndNamed(t *testing.T) {
	dir := t.TempDir()
	b := opener(t, dir)
	locktest.RunOversized(t, b, func(t *testing.T, key string, data []byte) {
		path := recordPath(t, dir, key)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	})
}

// recordPath takes key once through a client of its own and returns the
// file that holds its record.
func recordPath(t *testing.T, dir, key string) string {
	t.Helper()
	b := opener(t, dir)
	defer b.Close()
	now := time.Now()
	if _, err := b.TryAcquire(context.Background(), lockmgr.Record{LockKey: key, LockID: "planted", LockedAt: now.Unix(), ExpiresAt: now.Unix()}); err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "locks", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(`"lockKey": "`+key+`"`)) {
			return p
		}
	}
	t.Fatalf("no record file holds %s among %s", key, strings.Join(paths, ", "))
	return ""
}

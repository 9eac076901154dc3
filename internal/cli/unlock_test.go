package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engine/command"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
)

// shopProject writes a deployer.yaml of stack shop (environment dev, one
// Command component) in a temp dir and returns its path.
func shopProject(t *testing.T) string {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "deployer.yaml")
	yaml := "stack: shop\nenvironments: {dev: {}}\nservices:\n  app:\n    components:\n      api: {kind: Command, command: {create: \"true\"}}\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfgPath
}

// lockedProject writes a deployer.yaml in a temp dir and takes the stack lock
// of shop/dev in its file backend with a heartbeat age of hbAge.
func lockedProject(t *testing.T, hbAge time.Duration) (cfgPath string, rec lockmgr.Record, b lockmgr.Backend) {
	t.Helper()
	cfgPath = shopProject(t)
	b, err := filelock.New(filepath.Join(filepath.Dir(cfgPath), ".deployer"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	now := time.Now()
	rec, err = b.TryAcquire(context.Background(), lockmgr.Record{
		LockKey: lockmgr.StackKey("shop", "dev"), LockID: "11111111-2222-3333-4444-555555555555", LockedBy: "ci@runner",
		LockedAt: now.Add(-hbAge).Unix(), ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Add(-hbAge).Unix(),
		Metadata: lockmgr.Metadata{PID: 4242, Hostname: "runner", Operation: "deploy"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfgPath, rec, b
}

func runRoot(t *testing.T, stdin string, tty bool, argv ...string) (string, string, error) {
	t.Helper()
	io, out, errOut := Test(stdin)
	io.SetTTY(tty, tty, tty)
	f := NewFactory(io)
	f.NewEngines = func(*config.Config, EngineOptions) []engine.Engine { return []engine.Engine{command.New()} }
	defer f.Close()
	root := NewRootCmd(f)
	root.SetArgs(argv)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestUnlockShowsTheRecordAndAsks(t *testing.T) {
	cfg, rec, b := lockedProject(t, 10*time.Minute) // STALE
	_, stderr, err := runRoot(t, "no\n", true, "--config", cfg, "unlock", "-e", "dev", "--force")
	if err == nil || !strings.Contains(err.Error(), "left in place") {
		t.Fatalf("answering no must keep the lock: %v", err)
	}
	for _, want := range []string{rec.LockID, "ci@runner", "4242", "STALE", "Are you sure?"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("unlock should show %q before asking:\n%s", want, stderr)
		}
	}
	if _, err := b.Get(context.Background(), rec.LockKey); err != nil {
		t.Fatalf("lock gone after answering no: %v", err)
	}
	stdout, _, err := runRoot(t, "yes\n", true, "--config", cfg, "unlock", "-e", "dev", "--force")
	if err != nil || !strings.Contains(stdout, "released") {
		t.Fatalf("answering yes: %v\n%s", err, stdout)
	}
	if _, err := b.Get(context.Background(), rec.LockKey); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Fatalf("lock still there after unlock: %v", err)
	}
}

func TestUnlockOfAnActiveLockNeedsItsLockID(t *testing.T) {
	cfg, rec, b := lockedProject(t, 0) // ACTIVE
	_, _, err := runRoot(t, "", false, "--config", cfg, "unlock", "-e", "dev", "--force", "--yes")
	var usage *UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--lock-id "+rec.LockID) {
		t.Fatalf("want a usage error naming --lock-id %s, got %v", rec.LockID, err)
	}
	_, _, err = runRoot(t, "", false, "--config", cfg, "unlock", "-e", "dev", "--force", "--yes", "--lock-id", "someone-else")
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "nothing was broken") || strings.Contains(err.Error(), "taken over") {
		t.Fatalf("a wrong --lock-id must break nothing and say so, without claiming a takeover: %v", err)
	}
	if _, err := b.Get(context.Background(), rec.LockKey); err != nil {
		t.Fatal("lock broken by a refused unlock")
	}
	if _, _, err := runRoot(t, "", false, "--config", cfg, "unlock", "-e", "dev", "--force", "--yes", "--lock-id", rec.LockID); err != nil {
		t.Fatal(err)
	}
}

func TestStateLocksPrintsHolderAndVerdict(t *testing.T) {
	cfg, rec, _ := lockedProject(t, 10*time.Minute)
	stdout, _, err := runRoot(t, "", false, "--config", cfg, "state", "locks")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "LOCK") {
		t.Fatalf("want a header and one row:\n%s", stdout)
	}
	for _, want := range []string{rec.LockKey, "stack", "ci@runner", "deploy", "runner", "4242", "STALE", rec.LockID} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row lacks %q: %s", want, lines[1])
		}
	}
}

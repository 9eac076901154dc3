package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/engine/command"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/termui"
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

// testNow is the clock of the tests that run commands on lock records.
var testNow = time.Unix(1700000000, 0)

// lockedProject writes a deployer.yaml in a temp dir and takes the stack lock
// of shop/dev in its file backend with a heartbeat age of hbAge at testNow.
func lockedProject(t *testing.T, hbAge time.Duration) (cfgPath string, rec lockmgr.Record, b lockmgr.Backend) {
	t.Helper()
	cfgPath = shopProject(t)
	b, err := filelock.New(filepath.Join(filepath.Dir(cfgPath), ".deployer"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	rec, err = b.TryAcquire(context.Background(), lockmgr.Record{
		LockKey: lockmgr.StackKey("shop", "dev"), LockID: "11111111-2222-3333-4444-555555555555", LockedBy: "ci@runner",
		LockedAt: testNow.Add(-hbAge).Unix(), ExpiresAt: testNow.Add(time.Hour).Unix(), LastHeartbeat: testNow.Add(-hbAge).Unix(),
		Metadata: lockmgr.Metadata{PID: 4242, Hostname: "runner", Operation: "deploy"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfgPath, rec, b
}

func runRoot(t *testing.T, stdin string, tty bool, argv ...string) (string, string, error) {
	t.Helper()
	return runRootWith(t, nil, stdin, tty, argv...)
}

// runRootWith is runRoot on a app.Factory whose clock is now (nil: the real one).
func runRootWith(t *testing.T, now func() time.Time, stdin string, tty bool, argv ...string) (string, string, error) {
	t.Helper()
	io, out, errOut := termui.Test(stdin)
	io.SetTTY(tty, tty, tty)
	f := app.NewFactory(io)
	f.Now = now
	f.NewEngines = func(*config.Config, app.EngineOptions) []engine.Engine { return []engine.Engine{command.New()} }
	defer f.Close()
	root := NewRootCmd(f)
	root.SetArgs(argv)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func fixedClock() time.Time { return testNow }

func TestNewCmdUnlock(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		want    UnlockOptions
		wantErr string
	}{
		{argv: []string{"-e", "dev", "--force"}, want: UnlockOptions{Target: app.TargetFlags{Env: "dev"}, Force: true}},
		{argv: []string{"-s", "shop", "--env", "prod", "--component", "app/api", "--force", "--lock-id", "L-1", "--yes"},
			want: UnlockOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod", Component: "app/api"}, Force: true, LockID: "L-1", Yes: true}},
		{argv: []string{"-e", "dev", "--service", "app", "--force", "-y"}, want: UnlockOptions{Target: app.TargetFlags{Env: "dev", Service: "app"}, Force: true, Yes: true}},
		{argv: []string{"--key", "nightly-sync", "--force", "--lock-id", "L-2"}, want: UnlockOptions{Key: "nightly-sync", Force: true, LockID: "L-2"}},
		{argv: []string{"-e", "dev"}, wantErr: "unlock breaks another holder's lock: pass --force to confirm you mean it"},
		{argv: []string{"--force"}, wantErr: "--environment (-e) is required"},
		{argv: []string{"--key", "Nightly_Sync", "--force"}, wantErr: "lock key"},
		{argv: []string{"-e", "dev", "--service", "a", "--component", "a/b", "--force"}, wantErr: "use either --service or --component, not both"},
		{argv: []string{"-e", "dev", "--force", "extra"}, wantErr: "unknown command"},
	} {
		got, f, err := parseCmd(t, false, NewCmdUnlock, c.argv...)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want one saying %q", c.argv, err, c.wantErr)
			}
			if got != nil {
				t.Errorf("%v: run called despite the error", c.argv)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.argv, err)
		}
		if d := cmp.Diff(c.want, *got, cmpopts.IgnoreFields(UnlockOptions{}, "IO", "Unlock")); d != "" {
			t.Errorf("%v (-want +got):\n%s", c.argv, d)
		}
		if got.IO != f.IO || got.Unlock == nil {
			t.Errorf("%v: IO and Unlock must be bound from the app.Factory", c.argv)
		}
	}
}

// staleStatus is a STALE lock as the Manager reports it.
var staleStatus = lockmgr.Status{
	Record: lockmgr.Record{LockKey: "stack:shop:env:dev", LockID: "L-1", LockedBy: "ci@runner",
		LockedAt: 1699999400, LastHeartbeat: 1699999940, ExpiresAt: 1700003000,
		Metadata: lockmgr.Metadata{PID: 4242, Hostname: "runner", Operation: "deploy", DeploymentID: "dep-0123456789ab"}},
	Verdict: lockmgr.Stale, Level: lockmgr.LevelStack, Age: 10 * time.Minute, HeartbeatAge: time.Minute,
}

const staleRecordText = `Warning: this will forcefully release the lock.
  Lock:           stack:shop:env:dev
  Lock ID:        L-1
  Held by:        ci@runner
  Operation:      deploy
  Host / PID:     runner / 4242
  Deployment:     dep-0123456789ab
  Locked at:      2023-11-14 22:03:20 UTC (10m0s ago)
  Last heartbeat: 2023-11-14 22:12:20 UTC (1m0s ago)
  Expires at:     2023-11-14 23:03:20 UTC
  Status:         STALE
`

func TestRunUnlock(t *testing.T) {
	// breaks is a fake use case that finds st, asks, and breaks it.
	breaks := func(st lockmgr.Status, recordErr error) func(context.Context, stateops.UnlockRequest) (*stateops.UnlockResult, error) {
		return func(_ context.Context, req stateops.UnlockRequest) (*stateops.UnlockResult, error) {
			if err := req.Confirm(st); err != nil {
				return nil, err
			}
			req.Broken(st)
			return &stateops.UnlockResult{Lock: st, RecordErr: recordErr}, nil
		}
	}
	fails := func(err error) func(context.Context, stateops.UnlockRequest) (*stateops.UnlockResult, error) {
		return func(context.Context, stateops.UnlockRequest) (*stateops.UnlockResult, error) { return nil, err }
	}
	refused := &stateops.UnlockRefusedError{Lock: lockmgr.Status{Record: lockmgr.Record{LockKey: "stack:shop:env:dev", LockID: "L-1", LockedBy: "ci@runner"},
		Verdict: lockmgr.Active, HeartbeatAge: 4 * time.Second}}
	for _, c := range []struct {
		name       string
		opts       UnlockOptions
		stdin      string
		tty        bool
		wantOut    string
		wantErrOut string
		wantErr    string
		usage      bool
	}{
		{name: "yes", opts: UnlockOptions{Yes: true, Unlock: breaks(staleStatus, nil)},
			wantOut: "Lock stack:shop:env:dev (lock id L-1, held by ci@runner) released.\n", wantErrOut: staleRecordText},
		{name: "asked, yes", opts: UnlockOptions{Unlock: breaks(staleStatus, nil)}, stdin: "yes\n", tty: true,
			wantOut: "Lock stack:shop:env:dev (lock id L-1, held by ci@runner) released.\n", wantErrOut: staleRecordText + "Are you sure? (yes/no): "},
		{name: "asked, no", opts: UnlockOptions{Unlock: breaks(staleStatus, nil)}, stdin: "no\n", tty: true,
			wantErrOut: staleRecordText + "Are you sure? (yes/no): ", wantErr: "unlock cancelled: the lock was left in place"},
		{name: "no terminal", opts: UnlockOptions{Unlock: breaks(staleStatus, nil)},
			wantErrOut: staleRecordText, wantErr: "confirmation required but there is no terminal to ask on: pass --yes to proceed", usage: true},
		{name: "refused", opts: UnlockOptions{Yes: true, Unlock: fails(refused)},
			wantErr: "lock stack:shop:env:dev is ACTIVE (heartbeat 4s ago, by ci@runner): breaking it needs --lock-id L-1", usage: true},
		{name: "backend error", opts: UnlockOptions{Yes: true, Unlock: fails(errors.New("read lock: connection refused"))},
			wantErr: "read lock: connection refused"},
		{name: "not recorded", opts: UnlockOptions{Yes: true, Unlock: breaks(staleStatus, errors.New("deployment dep-0123456789ab was not recorded as abandoned: held"))},
			wantOut:    "Lock stack:shop:env:dev (lock id L-1, held by ci@runner) released.\n",
			wantErrOut: staleRecordText + "warning: deployment dep-0123456789ab was not recorded as abandoned: held\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			io, out, errOut := termui.Test(c.stdin)
			io.SetTTY(c.tty, c.tty, c.tty)
			opts := c.opts
			opts.IO = io
			err := runUnlock(context.Background(), &opts)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || err.Error() != c.wantErr) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
			var usage *exitcode.UsageError
			if errors.As(err, &usage) != c.usage {
				t.Errorf("error %v: want a usage error (exit 2): %v", err, c.usage)
			}
			if d := cmp.Diff(c.wantOut, out.String()); d != "" {
				t.Errorf("stdout (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.wantErrOut, errOut.String()); d != "" {
				t.Errorf("stderr (-want +got):\n%s", d)
			}
		})
	}
}

// The request carries --key and --lock-id to the use case.
func TestRunUnlockRequest(t *testing.T) {
	io, _, _ := termui.Test("")
	var got stateops.UnlockRequest
	opts := &UnlockOptions{IO: io, Key: "nightly-sync", LockID: "L-9", Yes: true,
		Unlock: func(_ context.Context, req stateops.UnlockRequest) (*stateops.UnlockResult, error) {
			got = req
			return nil, errors.New("stop")
		}}
	_ = runUnlock(context.Background(), opts)
	if got.Key != "nightly-sync" || got.LockID != "L-9" || got.Confirm == nil || got.Broken == nil {
		t.Errorf("request %+v", got)
	}
}

// Through the root command, on the file lock backend: the record is shown
// before asking, and answering no keeps the lock.
func TestUnlockShowsTheRecordAndAsks(t *testing.T) {
	cfg, rec, b := lockedProject(t, 10*time.Minute) // STALE
	_, stderr, err := runRootWith(t, fixedClock, "no\n", true, "--config", cfg, "unlock", "-e", "dev", "--force")
	if err == nil || !strings.Contains(err.Error(), "left in place") {
		t.Fatalf("answering no must keep the lock: %v", err)
	}
	for _, want := range []string{rec.LockID, "ci@runner", "4242", "(10m0s ago)", "STALE", "Are you sure?"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("unlock should show %q before asking:\n%s", want, stderr)
		}
	}
	if _, err := b.Get(context.Background(), rec.LockKey); err != nil {
		t.Fatalf("lock gone after answering no: %v", err)
	}
	stdout, _, err := runRootWith(t, fixedClock, "yes\n", true, "--config", cfg, "unlock", "-e", "dev", "--force")
	if err != nil || !strings.Contains(stdout, "released") {
		t.Fatalf("answering yes: %v\n%s", err, stdout)
	}
	if _, err := b.Get(context.Background(), rec.LockKey); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Fatalf("lock still there after unlock: %v", err)
	}
}

func TestUnlockOfAnActiveLockNeedsItsLockID(t *testing.T) {
	cfg, rec, b := lockedProject(t, 0) // ACTIVE
	_, _, err := runRootWith(t, fixedClock, "", false, "--config", cfg, "unlock", "-e", "dev", "--force", "--yes")
	var usage *exitcode.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--lock-id "+rec.LockID) {
		t.Fatalf("want a usage error naming --lock-id %s, got %v", rec.LockID, err)
	}
	_, _, err = runRootWith(t, fixedClock, "", false, "--config", cfg, "unlock", "-e", "dev", "--force", "--yes", "--lock-id", "someone-else")
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "nothing was broken") || strings.Contains(err.Error(), "taken over") {
		t.Fatalf("a wrong --lock-id must break nothing and say so, without claiming a takeover: %v", err)
	}
	if _, err := b.Get(context.Background(), rec.LockKey); err != nil {
		t.Fatal("lock broken by a refused unlock")
	}
	if _, _, err := runRootWith(t, fixedClock, "", false, "--config", cfg, "unlock", "-e", "dev", "--force", "--yes", "--lock-id", rec.LockID); err != nil {
		t.Fatal(err)
	}
}

package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdStateLocks(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		json    bool
		want    StateLocksOptions
		wantErr string
	}{
		{argv: nil, want: StateLocksOptions{}},
		{argv: []string{"-s", "shop"}, want: StateLocksOptions{Stack: "shop"}},
		{argv: []string{"--stack", "shop", "--env", "dev"}, json: true, want: StateLocksOptions{Stack: "shop", Env: "dev", JSON: true}},
		{argv: []string{"-e", "dev"}, want: StateLocksOptions{Env: "dev"}},
		{argv: []string{"extra"}, wantErr: "unknown command"},
		{argv: []string{"--lock-id", "x"}, wantErr: "unknown flag: --lock-id"},
	} {
		got, f, err := parseCmd(t, c.json, NewCmdStateLocks, c.argv...)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || got != nil {
				t.Errorf("%v: error %v, want one saying %q and no run", c.argv, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.argv, err)
		}
		if d := cmp.Diff(c.want, *got, cmpopts.IgnoreFields(StateLocksOptions{}, "IO", "Locks")); d != "" {
			t.Errorf("%v (-want +got):\n%s", c.argv, d)
		}
		if got.IO != f.IO || got.Locks == nil {
			t.Errorf("%v: IO and Locks must be bound from the app.Factory", c.argv)
		}
	}
}

func TestRunStateLocks(t *testing.T) {
	active := lockmgr.Status{
		Record: lockmgr.Record{LockKey: "stack:shop:env:dev:service:app", LockID: "L-2", LockedBy: "alice@laptop",
			LockedAt: 1699999880, LastHeartbeat: 1699999995, ExpiresAt: 1700003480, Fence: 7,
			Metadata: lockmgr.Metadata{PID: 7, Hostname: "laptop", Operation: "deploy"}},
		Verdict: lockmgr.Active, Level: lockmgr.LevelService, Age: 2 * time.Minute, HeartbeatAge: 5 * time.Second,
	}
	gone := staleStatus
	gone.HolderGone = true
	waiter := lockmgr.Waiter{Key: "stack:shop:env:dev", Ticket: 3, Position: 1, Status: lockmgr.Status{
		Record: lockmgr.Record{LockKey: "queue:stack:shop:env:dev#0000000000000000003#stack:shop:env:dev", LockID: "W-1",
			LockedBy: "bob@build", LockedAt: 1699999955, LastHeartbeat: 1699999995, ExpiresAt: 1700000075, Fence: 1,
			Metadata: lockmgr.Metadata{PID: 99, Hostname: "ci-1", Operation: "deploy"}},
		Verdict: lockmgr.Active, Level: lockmgr.LevelStack, Age: 45 * time.Second}}
	result := func(res *stateops.LocksResult) func(context.Context, stateops.LocksRequest) (*stateops.LocksResult, error) {
		return func(context.Context, stateops.LocksRequest) (*stateops.LocksResult, error) { return res, nil }
	}
	for _, c := range []struct {
		name    string
		opts    StateLocksOptions
		wantOut string
		wantErr string
	}{
		{name: "table", opts: StateLocksOptions{Locks: result(&stateops.LocksResult{Locks: []lockmgr.Status{gone, active}})},
			wantOut: "" +
				"LOCK                            LEVEL    HOLDER        OPERATION  HOST    PID   AGE    HEARTBEAT  STATUS                   LOCK ID\n" +
				"stack:shop:env:dev              stack    ci@runner     deploy     runner  4242  10m0s  1m0s ago   STALE (pid not running)  L-1\n" +
				"stack:shop:env:dev:service:app  service  alice@laptop  deploy     laptop  7     2m0s   5s ago     ACTIVE                   L-2\n"},
		{name: "none held", opts: StateLocksOptions{Locks: result(&stateops.LocksResult{})}, wantOut: "No locks held.\n"},
		{name: "locking off", opts: StateLocksOptions{Locks: result(&stateops.LocksResult{LockingOff: true})},
			wantOut: "Locking is off (backend.lock: none): no locks are taken or listed.\n"},
		{name: "locking off, json", opts: StateLocksOptions{JSON: true, Locks: result(&stateops.LocksResult{LockingOff: true})},
			wantOut: "{\n  \"locking_enabled\": false,\n  \"locks\": []\n}\n"},
		{name: "none held, json", opts: StateLocksOptions{JSON: true, Locks: result(&stateops.LocksResult{})},
			wantOut: "{\n  \"locking_enabled\": true,\n  \"locks\": [],\n  \"waiters\": []\n}\n"},
		{name: "waiters", opts: StateLocksOptions{Locks: result(&stateops.LocksResult{Locks: []lockmgr.Status{active}, Waiters: []lockmgr.Waiter{waiter}})},
			wantOut: "" +
				"LOCK                            LEVEL    HOLDER        OPERATION  HOST    PID  AGE   HEARTBEAT  STATUS  LOCK ID\n" +
				"stack:shop:env:dev:service:app  service  alice@laptop  deploy     laptop  7    2m0s  5s ago     ACTIVE  L-2\n" +
				"\nWaiting (in the order they will get the lock):\n" +
				"LOCK                POSITION  WAITER     OPERATION  HOST  PID  WAITING\n" +
				"stack:shop:env:dev  1         bob@build  deploy     ci-1  99   45s\n"},
		{name: "json", opts: StateLocksOptions{JSON: true, Locks: result(&stateops.LocksResult{Locks: []lockmgr.Status{active}, Waiters: []lockmgr.Waiter{waiter}})},
			wantOut: `{
  "locking_enabled": true,
  "locks": [
    {
      "lockKey": "stack:shop:env:dev:service:app",
      "lockId": "L-2",
      "lockedBy": "alice@laptop",
      "lockedAt": 1699999880,
      "expiresAt": 1700003480,
      "lastHeartbeat": 1699999995,
      "metadata": {
        "hostname": "laptop",
        "pid": 7,
        "operation": "deploy"
      },
      "fence": 7,
      "level": "service",
      "status": "ACTIVE",
      "age_seconds": 120,
      "heartbeat_age_seconds": 5
    }
  ],
  "waiters": [
    {
      "lockKey": "queue:stack:shop:env:dev#0000000000000000003#stack:shop:env:dev",
      "lockId": "W-1",
      "lockedBy": "bob@build",
      "lockedAt": 1699999955,
      "expiresAt": 1700000075,
      "lastHeartbeat": 1699999995,
      "metadata": {
        "hostname": "ci-1",
        "pid": 99,
        "operation": "deploy"
      },
      "fence": 1,
      "key": "stack:shop:env:dev",
      "level": "stack",
      "position": 1,
      "wait_seconds": 45
    }
  ]
}
`},
		{name: "error", opts: StateLocksOptions{Locks: func(context.Context, stateops.LocksRequest) (*stateops.LocksResult, error) {
			return nil, errors.New("list locks: connection refused")
		}}, wantErr: "list locks: connection refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			io, out, errOut := termui.Test("")
			opts := c.opts
			opts.IO = io
			err := runStateLocks(context.Background(), &opts)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || err.Error() != c.wantErr) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
			if d := cmp.Diff(c.wantOut, out.String()); d != "" {
				t.Errorf("stdout (-want +got):\n%s", d)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr %q, want nothing", errOut.String())
			}
		})
	}
	// The flags become the request.
	io, _, _ := termui.Test("")
	var got stateops.LocksRequest
	_ = runStateLocks(context.Background(), &StateLocksOptions{IO: io, Stack: "shop", Env: "dev",
		Locks: func(_ context.Context, req stateops.LocksRequest) (*stateops.LocksResult, error) {
			got = req
			return &stateops.LocksResult{}, nil
		}})
	if got != (stateops.LocksRequest{Stack: "shop", Env: "dev"}) {
		t.Errorf("request %+v", got)
	}
}

// Through the root command, on the file lock backend: the verdict is the
// Manager's with the configured stale_after (90 s without a heartbeat is
// ACTIVE under the default 2m, STALE under stale_after: 1m).
func TestStateLocksPrintsHolderAndVerdict(t *testing.T) {
	cfg, rec, _ := lockedProject(t, 90*time.Second)
	stdout, _, err := runRootWith(t, fixedClock, "", false, "--config", cfg, "state", "locks")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "LOCK") {
		t.Fatalf("want a header and one row:\n%s", stdout)
	}
	for _, want := range []string{rec.LockKey, "stack", "ci@runner", "deploy", "runner", "4242", "1m30s ago", "ACTIVE", rec.LockID} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row lacks %q: %s", want, lines[1])
		}
	}
	yaml, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(yaml, "backend: {stale_after: 1m}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err = runRootWith(t, fixedClock, "", false, "--config", cfg, "state", "locks", "-s", "shop", "-e", "dev")
	if err != nil || !strings.Contains(stdout, "STALE") {
		t.Errorf("with stale_after: 1m the lock is STALE: %v\n%s", err, stdout)
	}
	_, _, err = runRootWith(t, fixedClock, "", false, "--config", cfg, "state", "locks", "-e", "Dev")
	var usage *exitcode.UsageError
	if !errors.As(err, &usage) {
		t.Errorf("an invalid environment name: want a usage error, got %v", err)
	}
}

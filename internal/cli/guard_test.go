package cli

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/guard"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdGuardStop(t *testing.T) {
	tests := []struct {
		argv    string
		json    bool
		want    GuardStopOptions
		wantErr string
	}{
		{argv: "orders-db --as app-a", want: GuardStopOptions{Name: "orders-db", As: "app-a"}},
		{argv: "orders-db --as app-a --dry-run --detailed-exitcode", json: true,
			want: GuardStopOptions{Name: "orders-db", As: "app-a", DryRun: true, DetailedExitCode: true, JSON: true}},
		{argv: "orders-db", wantErr: "--as APP is required"},
		{argv: "Orders --as a", wantErr: `shared resource "Orders"`},
		{argv: "db --as ../x", wantErr: `application "../x"`},
		{argv: "", wantErr: "accepts 1 arg(s), received 0"},
		{argv: "db extra --as a", wantErr: "accepts 1 arg(s), received 2"},
		{argv: "db --as a --no-such", wantErr: "unknown flag: --no-such"},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			f := app.NewFactory(ios)
			f.JSON = tt.json
			var got *GuardStopOptions
			cmd := NewCmdGuardStop(f, func(_ context.Context, o *GuardStopOptions) error { got = o; return nil })
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitcode.UsageError{Msg: err.Error()} })
			err := parse(t, cmd, strings.Fields(tt.argv)...)
			checkParsed(t, err, got, tt.want, tt.wantErr)
		})
	}
}

func TestNewCmdGuardStatus(t *testing.T) {
	tests := []struct {
		argv    string
		json    bool
		want    GuardStatusOptions
		wantErr string
	}{
		{argv: "orders-db", want: GuardStatusOptions{Name: "orders-db"}},
		{argv: "orders-db", json: true, want: GuardStatusOptions{Name: "orders-db", JSON: true}},
		{argv: "db extra", wantErr: "accepts 1 arg(s), received 2"},
		{argv: "Orders", wantErr: `shared resource "Orders"`},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			f := app.NewFactory(ios)
			f.JSON = tt.json
			var got *GuardStatusOptions
			err := parse(t, NewCmdGuardStatus(f, func(_ context.Context, o *GuardStatusOptions) error { got = o; return nil }), strings.Fields(tt.argv)...)
			checkParsed(t, err, got, tt.want, tt.wantErr)
		})
	}
}

func TestRunGuardStop(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 200
	up := guard.SharerStatus{App: "b", Status: guard.Up, HTTPCode: &code, Timestamp: at, URL: "http://b/health"}
	down := guard.SharerStatus{App: "b", Status: guard.Down, Timestamp: at, URL: "http://b/health", Error: "connection refused"}
	stopped := &guard.Result{Resource: "db", As: "a", Decision: guard.Stopped, Sharers: []guard.SharerStatus{down},
		Lock: &guard.LockInfo{Key: "custom:guard-db", Acquired: true, Fence: 7, KeptUntil: &at},
		Stop: &guard.StopRun{Command: "pg_ctl stop", ExitCode: 0, DurationSeconds: 1.5}}
	skipped := &guard.Result{Resource: "db", As: "a", Decision: guard.SkippedSharedActive, Sharers: []guard.SharerStatus{up},
		Lock: &guard.LockInfo{Key: "custom:guard-db", Acquired: true, Fence: 1, Released: true}}
	lockHeld := &guard.Result{Resource: "db", As: "a", Decision: guard.SkippedLock, Sharers: []guard.SharerStatus{},
		Lock: &guard.LockInfo{Key: "custom:guard-db", Retries: 3, Holder: &lockmgr.Record{LockedBy: "ci@runner", LockedAt: at.Unix(), Metadata: lockmgr.Metadata{PID: 42}}}}
	failed := &guard.StopError{Err: errors.New("exit status 1")}
	tests := []struct {
		name    string
		opts    GuardStopOptions
		res     *guard.Result
		err     error
		wantOut string
		wantErr error
	}{
		{name: "stopped", opts: GuardStopOptions{Name: "db", As: "a", DetailedExitCode: true}, res: stopped,
			wantOut: "db: stopped (every other sharer is DOWN)\n" +
				"  APP  STATUS  HTTP  CHECKED               URL\n" +
				"  b    DOWN    -     2026-01-02T03:04:05Z  http://b/health\n" +
				"lock custom:guard-db (fence 7) kept until 2026-01-02T03:04:05Z, so a racing stop cannot run again\n" +
				"stop command \"pg_ctl stop\" exited 0 after 1.5s\n"},
		{name: "skipped for a sharer", opts: GuardStopOptions{Name: "db", As: "a", DetailedExitCode: true}, res: skipped,
			wantOut: "db: skipped_shared_active (not stopped: still used by b)\n" +
				"  APP  STATUS  HTTP  CHECKED               URL\n" +
				"  b    UP      200   2026-01-02T03:04:05Z  http://b/health\n" +
				"lock custom:guard-db (fence 1) released\n",
			wantErr: &exitcode.ExitCodeError{Code: 2}},
		{name: "skipped without --detailed-exitcode", opts: GuardStopOptions{Name: "db", As: "a"}, res: skipped,
			wantOut: "db: skipped_shared_active (not stopped: still used by b)\n" +
				"  APP  STATUS  HTTP  CHECKED               URL\n" +
				"  b    UP      200   2026-01-02T03:04:05Z  http://b/health\n" +
				"lock custom:guard-db (fence 1) released\n"},
		{name: "lock held, dry run", opts: GuardStopOptions{Name: "db", As: "a", DryRun: true, DetailedExitCode: true}, res: withDryRun(lockHeld),
			wantOut: "db: skipped_lock (dry run, nothing was run: not stopped: its lock is held, fail safe)\n" +
				"lock custom:guard-db held by ci@runner (-, pid 42) since 2026-01-02T03:04:05Z\n",
			wantErr: &exitcode.ExitCodeError{Code: 3}},
		{name: "lock held --json", opts: GuardStopOptions{Name: "db", As: "a", JSON: true}, res: lockHeld,
			wantOut: `{
  "resource": "db",
  "as": "a",
  "decision": "skipped_lock",
  "dry_run": false,
  "sharers": [],
  "lock": {
    "key": "custom:guard-db",
    "acquired": false,
    "retries": 3,
    "wait_seconds": 0,
    "holder": {
      "lockKey": "",
      "lockId": "",
      "lockedBy": "ci@runner",
      "lockedAt": 1767323045,
      "expiresAt": 0,
      "lastHeartbeat": 0,
      "metadata": {
        "pid": 42
      },
      "fence": 0
    },
    "released": false
  }
}
`},
		{name: "stop command failed", opts: GuardStopOptions{Name: "db", As: "a"}, res: stopped, err: failed,
			wantOut: "db: stopped (every other sharer is DOWN)\n" +
				"  APP  STATUS  HTTP  CHECKED               URL\n" +
				"  b    DOWN    -     2026-01-02T03:04:05Z  http://b/health\n" +
				"lock custom:guard-db (fence 7) kept until 2026-01-02T03:04:05Z, so a racing stop cannot run again\n" +
				"stop command \"pg_ctl stop\" exited 0 after 1.5s\n",
			wantErr: failed},
		{name: "unknown resource", opts: GuardStopOptions{Name: "dbx", As: "a"}, err: &guard.UnknownError{Msg: `"dbx" is not a shared resource`},
			wantErr: &exitcode.UsageError{Msg: `"dbx" is not a shared resource`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := termui.Test("")
			opts := tt.opts
			opts.IO = ios
			opts.Stop = func(_ context.Context, name, as string, dryRun bool) (*guard.Result, error) {
				if name != tt.opts.Name || as != tt.opts.As || dryRun != tt.opts.DryRun {
					t.Errorf("Stop(%q, %q, %v)", name, as, dryRun)
				}
				return tt.res, tt.err
			}
			err := runGuardStop(context.Background(), &opts)
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.wantOut, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if errOut.Len() > 0 {
				t.Errorf("stderr: %q", errOut)
			}
		})
	}
}

func withDryRun(r *guard.Result) *guard.Result {
	c := *r
	c.DryRun = true
	return &c
}

func TestRunGuardStatus(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 503
	sts := []guard.SharerStatus{
		{App: "a", Status: guard.Down, HTTPCode: &code, Timestamp: at, URL: "http://a/health"},
		{App: "b", Status: guard.Unknown, Timestamp: at, URL: "http://b/health", Error: "timeout after 2s"},
	}
	tests := []struct {
		name    string
		json    bool
		sts     []guard.SharerStatus
		err     error
		wantOut string
		wantErr error
	}{
		{name: "human", sts: sts, wantOut: "  APP  STATUS                      HTTP  CHECKED               URL\n" +
			"  a    DOWN                        503   2026-01-02T03:04:05Z  http://a/health\n" +
			"  b    UNKNOWN (timeout after 2s)  -     2026-01-02T03:04:05Z  http://b/health\n"},
		{name: "json", json: true, sts: sts[:1], wantOut: `[
  {
    "app": "a",
    "status": "DOWN",
    "http_code": 503,
    "timestamp": "2026-01-02T03:04:05Z",
    "url": "http://a/health"
  }
]
`},
		{name: "unknown resource", err: &guard.UnknownError{Msg: `"x" is not a shared resource`}, wantErr: &exitcode.UsageError{Msg: `"x" is not a shared resource`}},
		{name: "config error", err: errors.New("deployer.yaml:3: bad"), wantErr: errors.New("deployer.yaml:3: bad")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := termui.Test("")
			opts := GuardStatusOptions{IO: ios, Name: "db", JSON: tt.json,
				Status: func(_ context.Context, name string) ([]guard.SharerStatus, error) { return tt.sts, tt.err }}
			err := runGuardStatus(context.Background(), &opts)
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.wantOut, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if errOut.Len() > 0 {
				t.Errorf("stderr: %q", errOut)
			}
		})
	}
}

func TestGuardStopOutput(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer up.Close()
	dir := t.TempDir()
	yaml := `stack: shop
shared:
  db:
    stop: echo stopped >> stops.log
    sharers:
      a: {status_url: "http://127.0.0.1:1/a"}
      b: {status_url: "` + up.URL + `"}
  cache:
    stop: echo stopped >> stops.log
    sharers:
      a: {status_url: "http://127.0.0.1:1/a"}
`
	if err := os.WriteFile(filepath.Join(dir, "deployer.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := func(opts GuardStopOptions) (string, string, error) {
		io, out, errOut := termui.Test("")
		f := app.NewFactory(io)
		f.ConfigPath = filepath.Join(dir, "deployer.yaml")
		f.Now = func() time.Time { return at }
		f.Getenv = func(string) string { return "" }
		defer f.Close()
		o := &GuardStopOptions{IO: f.IO, Stop: guardStop(f)}
		o.Name, o.As, o.DetailedExitCode = opts.Name, opts.As, opts.DetailedExitCode
		err := runGuardStop(context.Background(), o)
		return out.String(), errOut.String(), err
	}

	out, _, err := run(GuardStopOptions{Name: "db", As: "a", DetailedExitCode: true})
	var ec *exitcode.ExitCodeError
	if !errors.As(err, &ec) || ec.Code != 2 {
		t.Fatalf("want exit 2: %v", err)
	}
	want := "db: skipped_shared_active (not stopped: still used by b)\n" +
		"  APP  STATUS  HTTP  CHECKED               URL\n" +
		"  b    UP      200   2026-01-02T03:04:05Z  " + up.URL + "\n" +
		"lock custom:guard-db (fence 1) released\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}

	out, _, err = run(GuardStopOptions{Name: "cache", As: "a"})
	if err != nil {
		t.Fatal(err)
	}
	want = "cache: dedicated_stopped (no sharer other than a, stopped without a lock)\n" +
		"stop command \"echo stopped >> stops.log\" exited 0 after 0.0s\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}

	_, _, err = run(GuardStopOptions{Name: "dbx", As: "a"})
	var usage *exitcode.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), `"dbx" is not a shared resource in `) || !strings.Contains(err.Error(), "(known: cache, db)") {
		t.Fatalf("unknown resource: %v", err)
	}
}

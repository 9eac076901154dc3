package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdLockExec(t *testing.T) {
	for _, c := range []struct {
		name  string
		argv  []string
		want  LockExecOptions
		usage string // the usage error's message, when argv is refused
	}{
		{
			name: "defaults",
			argv: []string{"--key", "nightly-sync", "--", "./sync.sh", "--full"},
			want: LockExecOptions{Key: "nightly-sync", Grace: 10 * time.Second, Args: []string{"./sync.sh", "--full"}},
		},
		{
			name: "every flag",
			argv: []string{"--key", "nightly-sync", "--ttl", "5m", "--lock-timeout", "1m", "--skip-if-locked", "--grace", "2s", "--", "sleep", "3"},
			want: LockExecOptions{Key: "nightly-sync", TTL: 5 * time.Minute, LockTimeout: time.Minute, SkipIfLocked: true,
				Grace: 2 * time.Second, Args: []string{"sleep", "3"}},
		},
		{
			name: "flags of the command stay its own",
			argv: []string{"--key", "k", "--", "ls", "--key", "-l"},
			want: LockExecOptions{Key: "k", Grace: 10 * time.Second, Args: []string{"ls", "--key", "-l"}},
		},
		{name: "no command", argv: []string{"--key", "k"}, usage: "no command to run: deployer lock exec --key NAME -- COMMAND [ARGS...]"},
		{name: "no key", argv: []string{"--", "true"}, usage: "--key NAME is required"},
		{name: "command before --", argv: []string{"--key", "x", "sleep", "3"}, usage: "put the command after --: deployer lock exec --key NAME -- COMMAND [ARGS...]"},
		{name: "bad key", argv: []string{"--key", "a b", "--", "true"}, usage: "lock key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			io, _, _ := termui.Test("")
			f := app.NewFactory(io)
			var got *LockExecOptions
			err := parse(t, NewCmdLockExec(f, func(_ context.Context, o *LockExecOptions) error { got = o; return nil }), c.argv...)
			if c.usage != "" {
				var usage *exitcode.UsageError
				if !errors.As(err, &usage) || !strings.Contains(usage.Msg, c.usage) || got != nil {
					t.Fatalf("err = %v, want a usage error saying %q and no run", err, c.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, *got, cmpopts.IgnoreFields(LockExecOptions{}, "IO", "Exec")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if got.IO != f.IO || got.Exec == nil {
				t.Error("the options lack the streams or the use case")
			}
		})
	}
}

// sameErr reports errors of the same type and message.
func sameErr(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || fmt.Sprintf("%T %v", a, a) == fmt.Sprintf("%T %v", b, b))
}

func TestRunLockExec(t *testing.T) {
	held := lockmgr.Record{
		LockKey: "custom:nightly-sync", LockID: "11111111-2222-3333-4444-555555555555", LockedBy: "ci@runner",
		LockedAt: time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC).Unix(),
		Metadata: lockmgr.Metadata{PID: 4242, Hostname: "runner"},
	}
	lock := lockmgr.Record{LockKey: "custom:nightly-sync", LockID: "lock-1", Fence: 7}
	lost := fmt.Errorf("lock custom:nightly-sync was lost while sync.sh ran (broken or taken over): %w", lockmgr.ErrLockLost)
	for _, c := range []struct {
		name           string
		res            *stateops.ExecResult
		err            error
		print          string // what the fake's command writes on its stdout
		stdout, stderr string
		wantErr        error
	}{
		{name: "exit 0", res: &stateops.ExecResult{Lock: lock, ExitCode: 0}, print: "synced\n", stdout: "synced\n"},
		{name: "exit code passes through", res: &stateops.ExecResult{Lock: lock, ExitCode: 7}, wantErr: &exitcode.ExitCodeError{Code: 7}},
		{name: "signalled like a shell", res: &stateops.ExecResult{Lock: lock, ExitCode: 143}, wantErr: &exitcode.ExitCodeError{Code: 143}},
		{
			name:   "skipped names the holder",
			res:    &stateops.ExecResult{Skipped: &held, ExitCode: -1},
			stderr: "skipped: lock custom:nightly-sync is held by ci@runner (pid 4242 on runner, since 2026-11-23T03:00:00Z, lock id 11111111-2222-3333-4444-555555555555)\n",
		},
		{name: "held", err: &lockmgr.HeldError{Record: held}, wantErr: &lockmgr.HeldError{Record: held}},
		{name: "lost", res: &stateops.ExecResult{Lock: lock, ExitCode: 143}, err: lost, wantErr: lost},
		{
			name:    "release failed after the command",
			res:     &stateops.ExecResult{Lock: lock, ExitCode: 3, ReleaseErr: errors.New("dial tcp: connection refused")},
			stderr:  "warning: lock custom:nightly-sync was not released: dial tcp: connection refused\n",
			wantErr: &exitcode.ExitCodeError{Code: 3},
		},
		{
			name:    "cancelled, release failed",
			res:     &stateops.ExecResult{Lock: lock, ExitCode: 143, ReleaseErr: errors.New("timeout")},
			err:     context.Canceled,
			stderr:  "warning: lock custom:nightly-sync was not released: timeout\n",
			wantErr: context.Canceled,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			io, stdout, stderr := termui.Test("")
			var got stateops.ExecRequest
			opts := &LockExecOptions{
				IO: io, Key: "nightly-sync", LockTimeout: time.Minute, SkipIfLocked: true, Grace: 2 * time.Second, Args: []string{"sync.sh", "--full"},
				Exec: func(_ context.Context, req stateops.ExecRequest) (*stateops.ExecResult, error) {
					got = req
					fmt.Fprint(req.Stdout, c.print)
					return c.res, c.err
				},
			}
			err := runLockExec(context.Background(), opts)
			if !sameErr(err, c.wantErr) {
				t.Errorf("err = %#v, want %#v", err, c.wantErr)
			}
			if stdout.String() != c.stdout || stderr.String() != c.stderr {
				t.Errorf("stdout %q, stderr %q; want %q, %q", stdout, stderr, c.stdout, c.stderr)
			}
			want := stateops.ExecRequest{Key: "nightly-sync", Args: []string{"sync.sh", "--full"}, LockTimeout: time.Minute, SkipIfLocked: true, Grace: 2 * time.Second,
				Stdin: io.In, Stdout: io.Out, Stderr: io.ErrOut, Progress: io.ErrOut}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(stateops.ExecRequest{}, "Stdin", "Stdout", "Stderr", "Progress")); diff != "" ||
				got.Stdin != io.In || got.Stdout != io.Out || got.Stderr != io.ErrOut || got.Progress != io.ErrOut {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

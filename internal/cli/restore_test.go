package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdRestore(t *testing.T) {
	tests := []struct {
		name  string
		argv  []string
		json  bool
		want  RestoreOptions
		usage string
	}{
		{name: "by serial", argv: []string{"-e", "dev", "--serial", "12"}, want: RestoreOptions{Target: app.TargetFlags{Env: "dev"}, Serial: 12}},
		{name: "by time, every flag", argv: []string{"--stack", "shop", "--env", "prod", "--timestamp", "2024-01-15T14:00:00Z", "--yes", "--lock-timeout", "2m"}, json: true,
			want: RestoreOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod"}, Timestamp: "2024-01-15T14:00:00Z", Yes: true, LockTimeout: 2 * time.Minute, JSON: true}},
		{name: "short flags", argv: []string{"-s", "shop", "-e", "prod", "--serial", "3", "-y"}, want: RestoreOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod"}, Serial: 3, Yes: true}},
		{name: "no environment", argv: []string{"--serial", "3"}, usage: "--environment (-e) is required (or set DEPLOYER_ENVIRONMENT)"},
		{name: "neither serial nor time", argv: []string{"-e", "dev"}, usage: "restore needs exactly one of --serial N or --timestamp T (RFC 3339); see deployer history"},
		{name: "both serial and time", argv: []string{"-e", "dev", "--serial", "2", "--timestamp", "2024-01-01T00:00:00Z"},
			usage: "restore needs exactly one of --serial N or --timestamp T (RFC 3339); see deployer history"},
		{name: "an argument", argv: []string{"-e", "dev", "--serial", "2", "now"}, usage: `unknown command "now" for "restore"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, f, err := parseCmd(t, tt.json, NewCmdRestore, tt.argv...)
			io := f.IO
			if tt.usage != "" {
				if err == nil || err.Error() != tt.usage {
					t.Fatalf("err = %v, want %q", err, tt.usage)
				}
				if got != nil {
					t.Fatal("run called after a usage error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.IO != io || got.Config == nil || got.Restore == nil {
				t.Errorf("IO, Config and Restore must be bound: %+v", got)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(RestoreOptions{}, "IO", "Config", "Restore")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunRestore(t *testing.T) {
	written := time.Date(2024, 1, 15, 14, 20, 0, 0, time.UTC)
	snap := &statestore.State{Serial: 2, Metadata: statestore.Metadata{LastUpdated: written},
		Resources: map[string]*statestore.Resource{"app/api": {}, "app/db": {}}}
	preview := stateops.RestorePreview{Snapshot: snap, Info: statestore.SnapshotInfo{Serial: 2}, Current: statestore.Head{Serial: 4}, Serial: 5}
	uncommitted := preview
	uncommitted.Info.Uncommitted = true
	result := &stateops.RestoreResult{Head: statestore.Head{Serial: 5}, State: snap, RestoredFrom: 2, DeploymentID: "dep-555555555555"}
	shop := &config.Config{Stack: "shop", Dir: "/srv/shop"}
	const asked = "Restore shop/dev to the snapshot of serial 2 (2 resources, written 2024-01-15T14:20:00Z) as serial 5.\nRestore? (yes/no): "
	const restored = "Restored shop/dev from serial 2 as serial 5 (2 resources). The infrastructure was not changed: run deployer plan to compare.\n"
	tests := []struct {
		name    string
		opts    RestoreOptions
		stdin   string
		tty     bool
		cfg     *config.Config
		preview *stateops.RestorePreview // what the fake shows Confirm, if it is set
		err     error                    // the use case's error
		wantReq *stateops.RestoreRequest // nil: the use case is not called
		wantOut string
		wantErr string
		errIs   error
	}{
		{
			name:    "by serial with --yes",
			opts:    RestoreOptions{Target: app.TargetFlags{Env: "dev"}, Serial: 2, Yes: true, LockTimeout: time.Minute},
			cfg:     shop,
			wantReq: &stateops.RestoreRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}, Serial: 2, LockTimeout: time.Minute, Dir: "/srv/shop"},
			wantOut: restored,
		},
		{
			name:    "by time, json",
			opts:    RestoreOptions{Target: app.TargetFlags{Stack: "web", Env: "dev"}, Timestamp: "2024-01-15T15:00:00+01:00", Yes: true, JSON: true},
			cfg:     shop,
			wantReq: &stateops.RestoreRequest{Target: deploy.Target{Stack: "web", Env: "dev"}, At: time.Date(2024, 1, 15, 14, 0, 0, 0, time.UTC), Dir: "/srv/shop"},
			wantOut: "{\n  \"environment\": \"dev\",\n  \"resources\": 2,\n  \"restored_from\": 2,\n  \"serial\": 5,\n  \"stack\": \"web\"\n}\n",
		},
		{
			name:    "asks on a terminal: yes",
			opts:    RestoreOptions{Target: app.TargetFlags{Env: "dev"}, Serial: 2},
			stdin:   "yes\n",
			tty:     true,
			cfg:     shop,
			preview: &preview,
			wantReq: &stateops.RestoreRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}, Serial: 2, Dir: "/srv/shop"},
			wantOut: restored,
		},
		{
			name:    "asks on a terminal, names an uncommitted snapshot: no",
			opts:    RestoreOptions{Target: app.TargetFlags{Env: "dev"}, Serial: 2},
			stdin:   "no\n",
			tty:     true,
			cfg:     shop,
			preview: &uncommitted,
			wantReq: &stateops.RestoreRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}, Serial: 2, Dir: "/srv/shop"},
			wantErr: deploy.ErrDeclined.Error(),
			errIs:   deploy.ErrDeclined,
		},
		{
			name:    "no terminal and no --yes",
			opts:    RestoreOptions{Target: app.TargetFlags{Env: "dev"}, Serial: 2},
			cfg:     shop,
			wantErr: "restore needs confirmation but there is no terminal to ask on: pass --yes to proceed",
		},
		{
			name:    "a timestamp that is not RFC 3339",
			opts:    RestoreOptions{Target: app.TargetFlags{Env: "dev"}, Timestamp: "yesterday", Yes: true},
			cfg:     shop,
			wantErr: `--timestamp "yesterday": want RFC 3339, e.g. 2024-01-15T14:20:00Z`,
		},
		{
			name:    "no stack anywhere",
			opts:    RestoreOptions{Target: app.TargetFlags{Env: "dev"}, Serial: 2, Yes: true},
			cfg:     &config.Config{},
			wantErr: "--stack (-s) is required when deployer.yaml has no stack:",
		},
		{
			name:    "the use case fails",
			opts:    RestoreOptions{Target: app.TargetFlags{Env: "dev"}, Serial: 9, Yes: true},
			cfg:     shop,
			err:     statestore.ErrNotFound,
			wantReq: &stateops.RestoreRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}, Serial: 9, Dir: "/srv/shop"},
			wantErr: "state not found",
			errIs:   statestore.ErrNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			io, stdout, stderr := termui.Test(tt.stdin)
			io.SetTTY(tt.tty, tt.tty, tt.tty)
			opts := tt.opts
			opts.IO = io
			opts.Config = func() (*config.Config, error) { return tt.cfg, nil }
			var gotReq *stateops.RestoreRequest
			opts.Restore = func(_ context.Context, cfg *config.Config, req stateops.RestoreRequest) (*stateops.RestoreResult, error) {
				if cfg != tt.cfg {
					t.Errorf("the use case got config %p, want the loaded one %p", cfg, tt.cfg)
				}
				if (req.Confirm != nil) != (tt.preview != nil) {
					t.Fatalf("Confirm set: %v, want %v", req.Confirm != nil, tt.preview != nil)
				}
				confirm := req.Confirm
				req.Confirm = nil
				gotReq = &req
				if confirm != nil {
					ok, err := confirm(*tt.preview)
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, deploy.ErrDeclined
					}
				}
				return result, tt.err
			}
			err := app.WithTarget(&opts.Target, opts.Config, runRestore)(context.Background(), &opts)
			if diff := cmp.Diff(tt.wantReq, gotReq); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if got := errString(err); got != tt.wantErr {
				t.Errorf("err = %q, want %q", got, tt.wantErr)
			}
			if tt.errIs != nil && !errors.Is(err, tt.errIs) {
				t.Errorf("err %v does not wrap %v", err, tt.errIs)
			}
			if diff := cmp.Diff(tt.wantOut, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			wantErrOut := ""
			switch tt.preview {
			case &preview:
				wantErrOut = asked
			case &uncommitted:
				wantErrOut = "Restore shop/dev to the snapshot of serial 2 (2 resources, written 2024-01-15T14:20:00Z) as serial 5.\n" +
					"Serial 2 never became state.json (its write did not complete; history shows it as uncommitted): it holds what that apply produced.\n" +
					"Restore? (yes/no): "
			}
			if diff := cmp.Diff(wantErrOut, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

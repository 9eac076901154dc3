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

func TestNewCmdHistory(t *testing.T) {
	tests := []struct {
		name  string
		argv  []string
		json  bool
		want  HistoryOptions
		usage string // the usage error, if any
	}{
		{name: "defaults", argv: []string{"-e", "dev"}, want: HistoryOptions{Target: app.TargetFlags{Env: "dev"}, Limit: 20}},
		{name: "all flags", argv: []string{"--stack", "shop", "--env", "prod", "--limit", "0"}, json: true,
			want: HistoryOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod"}, Limit: 0, JSON: true}},
		{name: "short flags", argv: []string{"-s", "shop", "-e", "prod", "--limit", "3"}, want: HistoryOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod"}, Limit: 3}},
		{name: "no environment", argv: []string{"-s", "shop"}, usage: "--environment (-e) is required (or set DEPLOYER_ENVIRONMENT)"},
		{name: "negative limit", argv: []string{"-e", "dev", "--limit", "-1"}, usage: "--limit -1: want 0 (all entries) or a positive number"},
		{name: "an argument", argv: []string{"-e", "dev", "extra"}, usage: `unknown command "extra" for "history"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, f, err := parseCmd(t, tt.json, NewCmdHistory, tt.argv...)
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
			if got.IO != io || got.Config == nil || got.History == nil {
				t.Errorf("IO, Config and History must be bound: %+v", got)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(HistoryOptions{}, "IO", "Config", "History")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// The entries of one history, as stateops.Ops.History returns them: a
// snapshot that never became state.json, a restore, and the deploy before.
func historyEntries() []stateops.HistoryEntry {
	at := time.Date(2024, 1, 15, 14, 20, 0, 0, time.UTC)
	return []stateops.HistoryEntry{
		{Serial: 3, Time: at.Add(2 * time.Hour), Snapshot: "2024-01-15T16-20-00.000Z-3.json", Status: stateops.StatusUncommitted, Uncommitted: true},
		{Serial: 2, Time: at.Add(time.Hour), Snapshot: "2024-01-15T15-20-00.000Z-2.json", DeploymentID: "dep-222222222222", Type: "restore",
			TriggeredBy: "ann@laptop", Status: "success", Duration: 0.25, Changed: &statestore.ResourcesChanged{}, RestoredFrom: 1},
		{Serial: 1, Time: at, Snapshot: "2024-01-15T14-20-00.000Z-1.json", DeploymentID: "dep-111111111111", Type: "deploy",
			TriggeredBy: "github-actions-run-42", GitCommit: "0123456789abcdef0123", Status: "success", Duration: 12.5,
			Changed: &statestore.ResourcesChanged{Created: 3}},
	}
}

const historyTable = `SERIAL  TIME                  TYPE              STATUS       DEPLOYMENT        BY                     COMMIT        DURATION  CHANGES
3       2024-01-15T16:20:00Z  -                 uncommitted  -                 -                      -             0.0s      -
2       2024-01-15T15:20:00Z  restore (from 1)  success      dep-222222222222  ann@laptop             -             0.2s      +0 ~0 -0
1       2024-01-15T14:20:00Z  deploy            success      dep-111111111111  github-actions-run-42  0123456789ab  12.5s     +3 ~0 -0
`

const historyJSON = `[
  {
    "serial": 3,
    "time": "2024-01-15T16:20:00Z",
    "snapshot": "2024-01-15T16-20-00.000Z-3.json",
    "status": "uncommitted",
    "duration_seconds": 0,
    "uncommitted": true
  },
  {
    "serial": 2,
    "time": "2024-01-15T15:20:00Z",
    "snapshot": "2024-01-15T15-20-00.000Z-2.json",
    "deployment_id": "dep-222222222222",
    "type": "restore",
    "triggered_by": "ann@laptop",
    "status": "success",
    "duration_seconds": 0.25,
    "resources_changed": {
      "created": 0,
      "updated": 0,
      "deleted": 0
    },
    "restored_from": 1
  },
  {
    "serial": 1,
    "time": "2024-01-15T14:20:00Z",
    "snapshot": "2024-01-15T14-20-00.000Z-1.json",
    "deployment_id": "dep-111111111111",
    "type": "deploy",
    "triggered_by": "github-actions-run-42",
    "git_commit": "0123456789abcdef0123",
    "status": "success",
    "duration_seconds": 12.5,
    "resources_changed": {
      "created": 3,
      "updated": 0,
      "deleted": 0
    }
  }
]
`

func TestRunHistory(t *testing.T) {
	tampered := &statestore.ChecksumError{Location: ".deployer/stacks/shop/dev/state.json", Field: "resources", Stored: "sha256:aa", Computed: "sha256:bb"}
	tests := []struct {
		name      string
		opts      HistoryOptions
		cfg       *config.Config
		res       *stateops.HistoryResult
		err       error
		wantReq   *stateops.HistoryRequest // nil: the use case is not called
		wantOut   string
		wantErr   string
		wantErrIs error
	}{
		{
			name:    "table",
			opts:    HistoryOptions{Target: app.TargetFlags{Env: "dev"}, Limit: 20},
			cfg:     &config.Config{Stack: "shop"},
			res:     &stateops.HistoryResult{Entries: historyEntries()},
			wantReq: &stateops.HistoryRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}, Limit: 20},
			wantOut: historyTable,
		},
		{
			name:    "json",
			opts:    HistoryOptions{Target: app.TargetFlags{Stack: "web", Env: "prod"}, Limit: 0, JSON: true},
			cfg:     &config.Config{Stack: "shop"},
			res:     &stateops.HistoryResult{Entries: historyEntries()},
			wantReq: &stateops.HistoryRequest{Target: deploy.Target{Stack: "web", Env: "prod"}},
			wantOut: historyJSON,
		},
		{
			name:    "json of nothing but a state",
			opts:    HistoryOptions{Target: app.TargetFlags{Env: "dev"}, JSON: true},
			cfg:     &config.Config{Stack: "shop"},
			res:     &stateops.HistoryResult{Entries: []stateops.HistoryEntry{}},
			wantReq: &stateops.HistoryRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}},
			wantOut: "[]\n",
		},
		{
			name:    "a state that fails verification: the snapshots, then the error and how to restore",
			opts:    HistoryOptions{Target: app.TargetFlags{Env: "dev"}, Limit: 1},
			cfg:     &config.Config{Stack: "shop"},
			res:     &stateops.HistoryResult{Entries: historyEntries()[2:], StateErr: tampered},
			wantReq: &stateops.HistoryRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}, Limit: 1},
			wantOut: "SERIAL  TIME                  TYPE    STATUS   DEPLOYMENT        BY                     COMMIT        DURATION  CHANGES\n" +
				"1       2024-01-15T14:20:00Z  deploy  success  dep-111111111111  github-actions-run-42  0123456789ab  12.5s     +3 ~0 -0\n",
			wantErr: "state .deployer/stacks/shop/dev/state.json failed verification: checksum of resources is sha256:bb but the file records sha256:aa\n" +
				"the snapshots above are intact: restore one with deployer restore -s shop -e dev --serial N",
			wantErrIs: tampered,
		},
		{
			name: "an abandoned deployment: when it started and at least how long it ran",
			opts: HistoryOptions{Target: app.TargetFlags{Env: "dev"}, Limit: 20},
			cfg:  &config.Config{Stack: "shop"},
			res: &stateops.HistoryResult{Entries: []stateops.HistoryEntry{{Serial: 2, Time: time.Date(2024, 1, 15, 16, 0, 0, 0, time.UTC),
				Snapshot: "2024-01-15T16-00-00.000Z-2.json", DeploymentID: "dep-333333333333", Type: "deploy", TriggeredBy: "bob@ci",
				Status: statestore.DeploymentAbandoned, Duration: 95, Started: time.Date(2024, 1, 15, 14, 30, 0, 0, time.UTC), Changed: &statestore.ResourcesChanged{}}}},
			wantReq: &stateops.HistoryRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}, Limit: 20},
			wantOut: "SERIAL  TIME                  TYPE    STATUS     DEPLOYMENT        BY      COMMIT  DURATION  CHANGES\n" +
				"2       2024-01-15T14:30:00Z  deploy  abandoned  dep-333333333333  bob@ci  -       >=95.0s   +0 ~0 -0\n",
		},
		{
			name:    "the use case fails",
			opts:    HistoryOptions{Target: app.TargetFlags{Env: "dev"}, Limit: 20},
			cfg:     &config.Config{Stack: "shop"},
			err:     errors.New("no state for shop/dev: nothing deployed yet"),
			wantReq: &stateops.HistoryRequest{Target: deploy.Target{Stack: "shop", Env: "dev"}, Limit: 20},
			wantErr: "no state for shop/dev: nothing deployed yet",
		},
		{
			name:    "no stack anywhere",
			opts:    HistoryOptions{Target: app.TargetFlags{Env: "dev"}, Limit: 20},
			cfg:     &config.Config{},
			wantErr: "--stack (-s) is required when deployer.yaml has no stack:",
		},
		{
			name:    "a bad name",
			opts:    HistoryOptions{Target: app.TargetFlags{Stack: "Shop", Env: "dev"}, Limit: 20},
			cfg:     &config.Config{},
			wantErr: `stack "Shop": names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			io, stdout, stderr := termui.Test("")
			opts := tt.opts
			opts.IO = io
			opts.Config = func() (*config.Config, error) { return tt.cfg, nil }
			var gotReq *stateops.HistoryRequest
			opts.History = func(_ context.Context, cfg *config.Config, req stateops.HistoryRequest) (*stateops.HistoryResult, error) {
				if cfg != tt.cfg {
					t.Errorf("the use case got config %p, want the loaded one %p", cfg, tt.cfg)
				}
				gotReq = &req
				return tt.res, tt.err
			}
			err := app.WithTarget(&opts.Target, opts.Config, runHistory)(context.Background(), &opts)
			if diff := cmp.Diff(tt.wantReq, gotReq); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if got := errString(err); got != tt.wantErr {
				t.Errorf("err = %q, want %q", got, tt.wantErr)
			}
			if tt.wantErrIs != nil && !errors.Is(err, tt.wantErrIs) {
				t.Errorf("err %v does not wrap %v", err, tt.wantErrIs)
			}
			if diff := cmp.Diff(tt.wantOut, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
		})
	}
}

// errString is err's message, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

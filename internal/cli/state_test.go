package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
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

func TestNewCmdStateShow(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		json    bool
		want    StateShowOptions
		wantErr string
	}{
		{argv: []string{"-e", "dev"}, want: StateShowOptions{Target: app.TargetFlags{Env: "dev"}}},
		{argv: []string{"-s", "shop", "--env", "prod", "--serial", "3"}, json: true, want: StateShowOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod"}, Serial: 3, JSON: true}},
		{argv: []string{"-e", "dev", "--show-secrets", "-y"}, want: StateShowOptions{Target: app.TargetFlags{Env: "dev"}, ShowSecrets: true, Yes: true}},
		{argv: nil, wantErr: "--environment (-e) is required"},
		{argv: []string{"-e", "dev", "--service", "app"}, wantErr: "unknown flag: --service"},
		{argv: []string{"-e", "dev", "--serial", "three"}, wantErr: "invalid argument"},
	} {
		got, f, err := parseCmd(t, c.json, NewCmdStateShow, c.argv...)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || got != nil {
				t.Errorf("%v: error %v, want one saying %q and no run", c.argv, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.argv, err)
		}
		if d := cmp.Diff(c.want, *got, cmpopts.IgnoreFields(StateShowOptions{}, "IO", "Config", "Show", "SecretOut")); d != "" {
			t.Errorf("%v (-want +got):\n%s", c.argv, d)
		}
		if got.IO != f.IO || got.Config == nil || got.Show == nil || got.SecretOut != f.RawOut {
			t.Errorf("%v: IO, Config, Show and SecretOut must be bound from the app.Factory", c.argv)
		}
	}
}

// shownState is a state with one secret output.
func shownState() *statestore.State {
	at := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)
	return &statestore.State{
		Serial: 3, Lineage: "lin-1",
		Metadata:  statestore.Metadata{Stack: "shop", Environment: "dev", LastUpdated: at, LastUpdatedBy: "ci@runner"},
		Checksums: statestore.Checksums{Resources: "sha256:aa", Outputs: "sha256:bb"},
		Resources: map[string]*statestore.Resource{
			"app/db":  {Kind: "Command", Status: "ready", Lifecycle: statestore.Lifecycle{Version: 1, LastUpdated: at}},
			"app/api": {Kind: "Command", Status: "ready", Lifecycle: statestore.Lifecycle{Version: 2, LastUpdated: at}, Outputs: map[string]any{"url": "http://api", "password": "hunter2"}},
		},
	}
}

const shownStateText = `Stack:       shop
Environment: dev
Serial:      3
Lineage:     lin-1
Updated:     2023-11-14T22:13:20Z by ci@runner
Location:    .deployer/stacks/shop/dev/state.json
Checksums:   resources sha256:aa, outputs sha256:bb (verified)

RESOURCE  KIND     STATUS  VERSION  UPDATED               OUTPUTS
app/api   Command  ready   2        2023-11-14T22:13:20Z  2
app/db    Command  ready   1        2023-11-14T22:13:20Z  0
`

func TestRunStateShow(t *testing.T) {
	cfg := shopConfig(t)
	shows := func(_ context.Context, c *config.Config, req stateops.ShowStateRequest) (*stateops.ShowStateResult, error) {
		if c != cfg || req.Target != (deploy.Target{Stack: "shop", Env: "dev"}) {
			t.Errorf("Show(%v, %+v)", c, req.Target)
		}
		if req.Confirm != nil {
			if err := req.Confirm(req.Target); err != nil {
				return nil, err
			}
		}
		return &stateops.ShowStateResult{State: shownState(), Location: ".deployer/stacks/shop/dev/state.json"}, nil
	}
	for _, c := range []struct {
		name       string
		opts       StateShowOptions
		stdin      string
		tty        bool
		wantOut    string
		wantSecret string // on SecretOut
		wantErrOut string
		wantErr    string
	}{
		{name: "table", opts: StateShowOptions{Show: shows}, wantOut: shownStateText},
		{name: "secrets, yes", opts: StateShowOptions{ShowSecrets: true, Yes: true, Show: shows}, wantSecret: shownStateText},
		{name: "secrets, asked", opts: StateShowOptions{ShowSecrets: true, Show: shows}, stdin: "y\n", tty: true,
			wantSecret: shownStateText, wantErrOut: "Print the secret values of shop/dev in plain text? (yes/no): "},
		{name: "secrets, declined", opts: StateShowOptions{ShowSecrets: true, Show: shows}, stdin: "no\n", tty: true,
			wantErrOut: "Print the secret values of shop/dev in plain text? (yes/no): ", wantErr: "state show --show-secrets cancelled"},
		{name: "secrets, no terminal", opts: StateShowOptions{ShowSecrets: true, Show: shows},
			wantErr: "confirmation required but there is no terminal to ask on: pass --yes to proceed"},
		{name: "no state", opts: StateShowOptions{Show: func(context.Context, *config.Config, stateops.ShowStateRequest) (*stateops.ShowStateResult, error) {
			return nil, errors.New("no state for shop/dev in .deployer/stacks/shop/dev/state.json: deploy it first (deployer deploy -s shop -e dev)")
		}}, wantErr: "no state for shop/dev in .deployer/stacks/shop/dev/state.json: deploy it first (deployer deploy -s shop -e dev)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			io, out, errOut := termui.Test(c.stdin)
			io.SetTTY(c.tty, c.tty, c.tty)
			var secret bytes.Buffer
			opts := c.opts
			opts.IO, opts.SecretOut = io, &secret
			opts.Target, opts.Config = app.TargetFlags{Env: "dev"}, func() (*config.Config, error) { return cfg, nil }
			err := app.WithTarget(&opts.Target, opts.Config, runStateShow)(context.Background(), &opts)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || err.Error() != c.wantErr) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
			for _, s := range []struct{ name, want, got string }{
				{"stdout", c.wantOut, out.String()}, {"unmasked stdout", c.wantSecret, secret.String()}, {"stderr", c.wantErrOut, errOut.String()},
			} {
				if d := cmp.Diff(s.want, s.got); d != "" {
					t.Errorf("%s (-want +got):\n%s", s.name, d)
				}
			}
		})
	}

	// --json masks secret values unless --show-secrets.
	for _, reveal := range []bool{false, true} {
		io, out, _ := termui.Test("")
		var secret bytes.Buffer
		opts := &StateShowOptions{IO: io, Target: app.TargetFlags{Env: "dev"}, JSON: true, ShowSecrets: reveal, Yes: true, SecretOut: &secret,
			Config: func() (*config.Config, error) { return cfg, nil }, Show: shows}
		if err := app.WithTarget(&opts.Target, opts.Config, runStateShow)(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		printed := out.String() + secret.String()
		if !strings.HasPrefix(printed, "{\n  \"version\"") || !strings.Contains(printed, `"url": "http://api"`) {
			t.Errorf("--json (show secrets %v) printed:\n%s", reveal, printed)
		}
		if strings.Contains(printed, "hunter2") != reveal || strings.Contains(printed, `"password": "(sensitive)"`) == reveal {
			t.Errorf("--json (show secrets %v): the secret output is shown %v:\n%s", reveal, !reveal, printed)
		}
	}
}

func TestNewCmdStatePush(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		want    StatePushOptions
		wantErr string
	}{
		{argv: []string{"deployer-errored-shop-dev.json", "-e", "dev"}, want: StatePushOptions{Target: app.TargetFlags{Env: "dev"}, File: "deployer-errored-shop-dev.json"}},
		{argv: []string{"-s", "shop", "-e", "prod", "--yes", "--lock-timeout", "2m", "s.json"},
			want: StatePushOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod"}, File: "s.json", Yes: true, LockTimeout: 2 * time.Minute}},
		{argv: []string{"-e", "dev"}, wantErr: "accepts 1 arg(s), received 0"},
		{argv: []string{"a.json", "b.json", "-e", "dev"}, wantErr: "accepts 1 arg(s), received 2"},
		{argv: []string{"a.json"}, wantErr: "--environment (-e) is required"},
		{argv: []string{"a.json", "-e", "dev", "--lock-timeout", "soon"}, wantErr: "invalid argument"},
	} {
		got, f, err := parseCmd(t, false, NewCmdStatePush, c.argv...)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || got != nil {
				t.Errorf("%v: error %v, want one saying %q and no run", c.argv, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.argv, err)
		}
		if d := cmp.Diff(c.want, *got, cmpopts.IgnoreFields(StatePushOptions{}, "IO", "Config", "Push")); d != "" {
			t.Errorf("%v (-want +got):\n%s", c.argv, d)
		}
		if got.IO != f.IO || got.Config == nil || got.Push == nil {
			t.Errorf("%v: IO, Config and Push must be bound from the app.Factory", c.argv)
		}
	}
}

func TestRunStatePush(t *testing.T) {
	cfg := shopConfig(t)
	cfg.Backend.MaxStateSize = 1 << 20
	var asked stateops.PushRequest
	pushes := func(_ context.Context, c *config.Config, req stateops.PushRequest) (*stateops.PushResult, error) {
		asked = req
		tg := deploy.Target{Stack: "shop", Env: "dev"}
		if c != cfg || req.Target != tg || req.MaxStateSize != 1<<20 {
			t.Errorf("Push(%v, %+v)", c, req)
		}
		if req.Confirm != nil {
			if err := req.Confirm(tg, shownState()); err != nil {
				return nil, err
			}
		}
		return &stateops.PushResult{Target: tg, Head: statestore.Head{Serial: 4, Lineage: "lin-1"}}, nil
	}
	for _, c := range []struct {
		name       string
		opts       StatePushOptions
		stdin      string
		tty        bool
		wantErrOut string
		wantErr    string
	}{
		{name: "yes", opts: StatePushOptions{File: "e.json", Yes: true, LockTimeout: time.Minute, Push: pushes},
			wantErrOut: "Wrote e.json as serial 4 of shop/dev.\n"},
		{name: "asked", opts: StatePushOptions{File: "e.json", Push: pushes}, stdin: "yes\n", tty: true,
			wantErrOut: "Write e.json (2 resources) as the next serial of shop/dev? (yes/no): Wrote e.json as serial 4 of shop/dev.\n"},
		{name: "declined", opts: StatePushOptions{File: "e.json", Push: pushes}, stdin: "no\n", tty: true,
			wantErrOut: "Write e.json (2 resources) as the next serial of shop/dev? (yes/no): ", wantErr: "state push cancelled"},
		{name: "no terminal", opts: StatePushOptions{File: "e.json", Push: pushes},
			wantErr: "confirmation required but there is no terminal to ask on: pass --yes to proceed"},
		{name: "error", opts: StatePushOptions{File: "e.json", Yes: true, Push: func(context.Context, *config.Config, stateops.PushRequest) (*stateops.PushResult, error) {
			return nil, errors.New("state conflict on .deployer/stacks/shop/dev/state.json: lineage")
		}}, wantErr: "state conflict on .deployer/stacks/shop/dev/state.json: lineage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			io, out, errOut := termui.Test(c.stdin)
			io.SetTTY(c.tty, c.tty, c.tty)
			opts := c.opts
			opts.IO = io
			opts.Target, opts.Config = app.TargetFlags{Env: "dev"}, func() (*config.Config, error) { return cfg, nil }
			err := app.WithTarget(&opts.Target, opts.Config, runStatePush)(context.Background(), &opts)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || err.Error() != c.wantErr) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
			if d := cmp.Diff(c.wantErrOut, errOut.String()); d != "" {
				t.Errorf("stderr (-want +got):\n%s", d)
			}
		})
	}
	if asked.File != "e.json" || asked.LockTimeout != 0 {
		t.Errorf("last request %+v", asked)
	}
}

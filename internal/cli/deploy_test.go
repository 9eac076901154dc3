package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdDeploy(t *testing.T) {
	tests := []struct {
		name    string
		destroy bool
		json    bool
		argv    []string
		want    DeployOptions
		wantErr string // a usage error containing it
	}{
		{name: "env", argv: []string{"-e", "dev"}, want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}}},
		{name: "all flags", argv: []string{"-e", "dev", "--yes", "--lock-timeout", "10m", "--plan", "x.plan", "--parallelism", "3", "--install-pulumi", "--grace", "20s", "-s", "shop"},
			want: DeployOptions{Grace: 20 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Stack: "shop", Env: "dev"}}, Yes: true, LockTimeout: 10 * time.Minute, PlanFile: "x.plan", Parallelism: 3, InstallPulumi: true}},
		{name: "replace", argv: []string{"-e", "dev", "--replace", "app/api", "--replace", "data/db", "--component", "app/api"},
			want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev", Component: "app/api"}}, Replace: []string{"app/api", "data/db"}}},
		{name: "plan with component", argv: []string{"-e", "dev", "--plan", "x.plan", "--component", "app/api"}, wantErr: "--component cannot be used with --plan"},
		{name: "replace with plan", argv: []string{"-e", "dev", "--plan", "x.plan", "--replace", "app/api"}, wantErr: "--replace cannot be used with --plan"},
		{name: "with-dependents and a component", destroy: true, argv: []string{"-e", "dev", "--with-dependents", "--component", "data/db"},
			want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev", Component: "data/db"}}, Destroy: true, WithDependents: true}},
		{name: "with-dependents and exclude", destroy: true, argv: []string{"-e", "dev", "--with-dependents", "--exclude", "app"},
			want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev", Exclude: []string{"app"}}}, Destroy: true, WithDependents: true}},
		{name: "with-dependents without a target", destroy: true, argv: []string{"-e", "dev", "--with-dependents"}, wantErr: "--with-dependents widens a destroy of some components"},
		{name: "--env alias and --json", json: true, argv: []string{"--env", "prod", "--service", "app", "-y"},
			want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "prod", Service: "app"}, JSON: true}, Yes: true}},
		{name: "destroy", destroy: true, argv: []string{"-e", "dev", "--parallelism", "1"},
			want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Destroy: true, Parallelism: 1}},
		{name: "no environment", argv: []string{}, wantErr: "--environment (-e) is required"},
		{name: "service and component", argv: []string{"-e", "dev", "--service", "a", "--component", "a/b"}, wantErr: "either --service or --component"},
		{name: "component without slash", argv: []string{"-e", "dev", "--component", "api"}, wantErr: `--component "api": want SERVICE/COMPONENT`},
		{name: "parallelism 0", argv: []string{"-e", "dev", "--parallelism", "0"}, wantErr: "--parallelism must be at least 1, got 0"},
		{name: "grace 0", argv: []string{"-e", "dev", "--grace", "0s"}, wantErr: "--grace must be positive and at most 10m0s, got 0s"},
		{name: "destroy grace over 10m", destroy: true, argv: []string{"-e", "dev", "--grace", "11m"}, wantErr: "--grace must be positive and at most 10m0s, got 11m0s"},
		{name: "destroy has no --plan", destroy: true, argv: []string{"-e", "dev", "--plan", "x"}, wantErr: "unknown flag: --plan"},
		{name: "arguments", argv: []string{"-e", "dev", "extra"}, wantErr: `unknown command "extra"`},
		{name: "run", argv: []string{"-e", "dev", "--run-id", "123", "--upstream", "net,db", "--upstream", "cache", "--wait-timeout", "5m"},
			want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Run: app.RunFlags{ID: "123", Attempt: 1, Upstream: []string{"net", "db", "cache"}, WaitTimeout: 5 * time.Minute}}},
		{name: "run of a matrix entry without upstream", argv: []string{"-e", "dev", "--run-id", "123", "--upstream", "", "--run-attempt", "2"},
			want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Run: app.RunFlags{ID: "123", Attempt: 2, WaitTimeout: time.Hour}}},
		{name: "upstream without run-id", argv: []string{"-e", "dev", "--upstream", "net"}, wantErr: "--upstream needs a non-empty --run-id"},
		{name: "run-id with all", argv: []string{"-e", "dev", "--all", "--run-id", "1"}, wantErr: "--run-id"},
		{name: "run-attempt 0", argv: []string{"-e", "dev", "--run-id", "1", "--run-attempt", "0"}, wantErr: "--run-attempt must be at least 1, got 0"},
		{name: "destroy has no --run-id", destroy: true, argv: []string{"-e", "dev", "--run-id", "1"}, wantErr: "unknown flag: --run-id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			f := app.NewFactory(ios)
			var got *DeployOptions
			runF := func(_ context.Context, o *DeployOptions) error { got = o; return nil }
			cmd := NewCmdDeploy(f, runF)
			if tt.destroy {
				cmd = NewCmdDestroy(f, runF)
			}
			f.JSON = tt.json // --json is the root's flag
			err := parse(t, cmd, tt.argv...)
			checkParsed(t, err, got, tt.want, tt.wantErr)
		})
	}
}

func TestNewCmdImport(t *testing.T) {
	tests := []struct {
		name    string
		argv    []string
		want    DeployOptions
		wantErr string // a usage error containing it
	}{
		{name: "address and id", argv: []string{"data/db", "db-42", "-e", "dev", "--yes", "-s", "shop", "--lock-timeout", "1m"},
			want: DeployOptions{Grace: 3 * time.Second, StackOptions: app.StackOptions{Target: app.TargetFlags{Stack: "shop", Env: "dev"}}, Yes: true,
				LockTimeout: time.Minute, Import: deploy.ImportTarget{Address: "data/db", ID: "db-42"}}},
		{name: "no id", argv: []string{"data/db", "-e", "dev"}, wantErr: "accepts 2 arg(s), received 1"},
		{name: "empty id", argv: []string{"data/db", "", "-e", "dev"}, wantErr: "ID must not be empty"},
		{name: "no environment", argv: []string{"data/db", "db-42"}, wantErr: "--environment (-e) is required"},
		{name: "no --component", argv: []string{"data/db", "db-42", "-e", "dev", "--component", "data/db"}, wantErr: "unknown flag: --component"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			var got *DeployOptions
			err := parse(t, NewCmdImport(app.NewFactory(ios), func(_ context.Context, o *DeployOptions) error { got = o; return nil }), tt.argv...)
			checkParsed(t, err, got, tt.want, tt.wantErr)
		})
	}
}

func TestRunDeploy(t *testing.T) {
	cfg := shopConfig(t)
	cfg.Parallelism = 4
	p := shopPlan(t)
	done := &deploy.Outcome{Plan: p, Head: statestore.Head{Serial: 4},
		Deployment: statestore.Deployment{DeploymentID: "d-1", Status: "success", DurationSeconds: 1.25, ResourcesChanged: statestore.ResourcesChanged{Created: 1}},
		Summary:    deploy.Summary{Created: 1},
		Results:    []engine.Result{{Address: "app/api", Status: "ready"}}}
	// applies calls the UI's ShowPlan and Confirm like deploy.Service.Apply,
	// then returns out.
	applies := func(out *deploy.Outcome) func(context.Context, deploy.ApplyRequest, deploy.UI, app.EngineOptions) (*deploy.Outcome, error) {
		return func(_ context.Context, req deploy.ApplyRequest, ui deploy.UI, _ app.EngineOptions) (*deploy.Outcome, error) {
			if err := ui.ShowPlan(p); err != nil {
				return nil, err
			}
			ok, err := ui.Confirm(p)
			if err == nil && !ok {
				err = deploy.ErrDeclined
			}
			if err != nil {
				return &deploy.Outcome{Plan: p}, err
			}
			return out, nil
		}
	}
	var planText strings.Builder
	if err := planview.NewHuman(false, nil).Render(&planText, p); err != nil {
		t.Fatal(err)
	}
	held := &lockmgr.HeldError{Record: lockmgr.Record{LockKey: "stack:shop:dev"}}
	// Ctrl-C: one step failed, one was stopped, one never started.
	stopped := &deploy.Outcome{Plan: p, Head: statestore.Head{Serial: 4},
		Deployment: statestore.Deployment{DeploymentID: "d-2", Status: "cancelled", DurationSeconds: 2},
		Summary:    deploy.Summary{Failed: []engine.Result{{Address: "app/api", Status: engine.StatusFailed}}, Cancelled: 1, NotStarted: 1}}

	tests := []struct {
		name       string
		opts       DeployOptions
		stdin      string
		tty        bool
		apply      func(context.Context, deploy.ApplyRequest, deploy.UI, app.EngineOptions) (*deploy.Outcome, error)
		wantOut    string
		wantErrOut string
		wantErr    error
	}{
		{name: "deploy --yes", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Yes: true}, apply: applies(done),
			wantOut: planText.String() + "\nDeployment d-1 success in 1.2s: 1 created, 0 updated, 0 deleted. State shop/dev is at serial 4.\n"},
		{name: "cancelled: failed steps and stopped steps apart", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Yes: true}, apply: applies(stopped),
			wantOut: planText.String() + "\nDeployment d-2 cancelled in 2.0s: 0 created, 0 updated, 0 deleted, 1 failed, 1 cancelled, 1 not started. State shop/dev is at serial 4.\n"},
		{name: "deploy --json", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}, JSON: true}, Yes: true}, apply: applies(done),
			wantOut: `{
  "stack": "shop",
  "environment": "dev",
  "changed": true,
  "deployment_id": "d-1",
  "status": "success",
  "serial": 4,
  "plan": ` + indentJSON(t, p, "  ") + `,
  "summary": {
    "created": 1,
    "updated": 0,
    "replaced": 0,
    "deleted": 0,
    "failed": [],
    "cancelled": 0,
    "pending": 0,
    "unchanged": 0,
    "not_started": 0
  }
}
`},
		{name: "confirmed on a terminal", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}}, stdin: "yes\n", tty: true, apply: applies(done),
			wantOut:    planText.String() + "\nDeployment d-1 success in 1.2s: 1 created, 0 updated, 0 deleted. State shop/dev is at serial 4.\n",
			wantErrOut: "Apply these changes to shop/dev? (yes/no): "},
		{name: "destroy declined by y", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Destroy: true}, stdin: "y\n", tty: true, apply: applies(done),
			wantOut: planText.String(), wantErrOut: destroyPrompt,
			wantErr: errors.New("destroy cancelled: nothing was deleted (only yes or shop, typed in full, confirms a destroy)")},
		{name: "destroy confirmed by the stack name", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Destroy: true}, stdin: "shop\n", tty: true, apply: applies(done),
			wantOut:    planText.String() + "\nDeployment d-1 success in 1.2s: 1 created, 0 updated, 0 deleted. State shop/dev is at serial 4.\n",
			wantErrOut: destroyPrompt},
		{name: "no terminal and no --yes", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Destroy: true},
			wantErr: &exitcode.UsageError{Msg: "destroy needs confirmation but there is no terminal to ask on: pass --yes to proceed"}},
		{name: "import: no terminal and no --yes", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Import: deploy.ImportTarget{Address: "app/api", ID: "i-1"}},
			wantErr: &exitcode.UsageError{Msg: "import needs confirmation but there is no terminal to ask on: pass --yes to proceed"}},
		{name: "unknown environment", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "prod"}}, Yes: true},
			wantErr: &exitcode.UsageError{Msg: `environment "prod" is not in deployer.yaml (known: dev): pick one of those or add it under the environments key`}},
		{name: "lock held", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Yes: true},
			apply: func(context.Context, deploy.ApplyRequest, deploy.UI, app.EngineOptions) (*deploy.Outcome, error) {
				return nil, held
			},
			wantErr: held},
		{name: "plan file missing", opts: DeployOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Yes: true, PlanFile: "/nonexistent/x.plan"},
			wantErr: errors.New("read plan: stat /nonexistent/x.plan: no such file or directory")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := termui.Test(tt.stdin)
			ios.SetTTY(tt.tty, tt.tty, tt.tty)
			ios.DisableColor()
			opts := tt.opts
			opts.IO = ios
			opts.Config = func() (*config.Config, error) { return cfg, nil }
			opts.Apply = tt.apply
			if opts.Apply == nil {
				opts.Apply = func(context.Context, deploy.ApplyRequest, deploy.UI, app.EngineOptions) (*deploy.Outcome, error) {
					t.Fatal("use case called")
					return nil, nil
				}
			}
			err := runDeploy(context.Background(), &opts)
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.wantOut, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErrOut, errOut.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

const destroyPrompt = "Destroy these components from shop/dev? There is no undo. Type yes or shop to confirm: "

func TestRunDeployRequest(t *testing.T) {
	cfg := shopConfig(t)
	cfg.Parallelism = 4
	ios, _, _ := termui.Test("")
	var got deploy.ApplyRequest
	var gotEng app.EngineOptions
	var gotUI deploy.UI
	opts := DeployOptions{IO: ios, Yes: true, Destroy: true, LockTimeout: time.Minute, InstallPulumi: true,
		StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev", Component: "app/api"}, Config: func() (*config.Config, error) { return cfg, nil }},
		Apply: func(_ context.Context, req deploy.ApplyRequest, ui deploy.UI, eng app.EngineOptions) (*deploy.Outcome, error) {
			got, gotUI, gotEng = req, ui, eng
			return nil, nil
		},
	}
	if err := runDeploy(context.Background(), &opts); err != nil {
		t.Fatal(err)
	}
	want := deploy.Target{Stack: "shop", Env: "dev", Service: "app", Component: "api"}
	if got.Config != cfg || got.Target != want || !got.Destroy || got.LockTimeout != time.Minute || got.Parallelism != 0 || !gotEng.InstallPulumi {
		t.Errorf("request %+v, engines %+v", got, gotEng)
	}
	if ok, err := gotUI.Confirm(nil); !ok || err != nil { // --yes: confirmed without asking (no terminal to ask on)
		t.Errorf("--yes: Confirm = %v, %v; want confirmed without a question", ok, err)
	}
	opts.Parallelism = 2
	if err := runDeploy(context.Background(), &opts); err != nil || got.Parallelism != 2 {
		t.Errorf("--parallelism 2: %d, %v", got.Parallelism, err)
	}
}

// checkUsage fails t unless err says want and, but for cobra's own
// argument errors (mapped to exit 2 by cmd/deployer), is a *exitcode.UsageError.
func checkUsage(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one with %q", err, want)
	}
	var usage *exitcode.UsageError
	var target *deploy.TargetError // exit 2 as well (docs/exit-codes.md)
	if !errors.As(err, &usage) && !errors.As(err, &target) && !strings.Contains(want, "unknown command") && !strings.Contains(want, "arg(s)") {
		t.Fatalf("err = %v (%T), want a usage error", err, err)
	}
}

// checkErr fails t unless err matches want: the same message and, for a
// *exitcode.UsageError or a sentinel, the same kind.
func checkErr(t *testing.T, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("err = %v, want none", err)
	case want == nil:
	case err == nil:
		t.Fatalf("err = nil, want %v", want)
	case errors.Is(err, want):
	case err.Error() != want.Error():
		t.Fatalf("err = %q, want %q", err, want)
	default:
		var usage *exitcode.UsageError
		if errors.As(want, &usage) && !errors.As(err, &usage) {
			t.Fatalf("err = %v (%T), want a usage error", err, err)
		}
	}
}

// indentJSON is v as PrintJSON writes it, indented by prefix after the
// first line (a value nested in a JSON object).
func indentJSON(t *testing.T, v any, prefix string) string {
	t.Helper()
	var b strings.Builder
	if err := (&termui.IOStreams{Out: &b}).PrintJSON(v); err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\n", "\n"+prefix)
}

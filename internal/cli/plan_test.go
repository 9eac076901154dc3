package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/planview"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdPlan(t *testing.T) {
	tests := []struct {
		name    string
		json    bool
		argv    []string
		want    PlanOptions
		wantErr string
	}{
		{name: "env", argv: []string{"-e", "dev"}, want: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}}},
		{name: "all flags", json: true, argv: []string{"--env", "prod", "-s", "shop", "--component", "app/api", "--out", "p.json", "--detailed-exitcode", "--preview", "--refresh"},
			want: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod", Component: "app/api"}, JSON: true}, Out: "p.json", DetailedExitcode: true, Preview: true, Refresh: true}},
		{name: "destroy a service", argv: []string{"--environment", "dev", "--service", "app", "--destroy"},
			want: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev", Service: "app"}}, Destroy: true}},
		{name: "no environment", argv: []string{"--out", "p.json"}, wantErr: "--environment (-e) is required"},
		{name: "service and component", argv: []string{"-e", "dev", "--service", "a", "--component", "a/b"}, wantErr: "either --service or --component"},
		{name: "arguments", argv: []string{"-e", "dev", "extra"}, wantErr: `unknown command "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			f := app.NewFactory(ios)
			var got *PlanOptions
			cmd := NewCmdPlan(f, func(_ context.Context, o *PlanOptions) error { got = o; return nil })
			f.JSON = tt.json // --json is the root's flag
			err := parse(t, cmd, tt.argv...)
			checkParsed(t, err, got, tt.want, tt.wantErr)
		})
	}
}

func TestRunPlan(t *testing.T) {
	cfg := shopConfig(t)
	p := shopPlan(t)
	var human, asJSON strings.Builder
	if err := planview.NewHuman(false, nil).Render(&human, p); err != nil {
		t.Fatal(err)
	}
	if err := planview.NewJSON().Render(&asJSON, p); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dev.plan")
	preflightErr := errors.New("the Pulumi CLI is not installed: pass --install-pulumi")

	tests := []struct {
		name       string
		opts       PlanOptions
		preflight  error // nil: passes; the fake fails the test when called unexpectedly
		noChanges  bool  // the plan has no changes
		wantCalls  string
		wantOut    string
		wantErrOut string
		wantErr    error
	}{
		{name: "human", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}}, wantCalls: "plan", wantOut: human.String()},
		{name: "json", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}, JSON: true}}, wantCalls: "plan", wantOut: asJSON.String()},
		{name: "detailed exit code", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, DetailedExitcode: true}, wantCalls: "plan",
			wantOut: human.String(), wantErr: &exitcode.ExitCodeError{Code: 2}},
		{name: "destroy scoped", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev", Component: "app/api"}}, Destroy: true}, wantCalls: "plan(destroy app/api)",
			wantOut: human.String()},
		{name: "refresh and preview", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Refresh: true, Preview: true}, wantCalls: "preflight plan drift preview",
			wantOut: "Drift between actual_state and what is live (1 components):\n  ! app/api\n      outputs.password: (sensitive) -> (sensitive)\n      outputs.replicas: 2 -> 3\n\n" +
				human.String() + "\nFake preview:\n+ 1 to create\n"},
		{name: "refresh and preview --json", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}, JSON: true}, Refresh: true, Preview: true}, wantCalls: "preflight plan drift preview",
			wantOut:    asJSON.String(),
			wantErrOut: `{"drift":[{"address":"app/api","fields":[{"path":"outputs.password","old":"(sensitive)","new":"(sensitive)","op":"change","sensitive":true},{"path":"outputs.replicas","old":2,"new":3,"op":"change"}]}]}` + "\n\nFake preview:\n+ 1 to create\n"},
		{name: "drift and no changes", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Refresh: true}, noChanges: true,
			wantCalls: "preflight plan drift",
			wantOut: "Drift between actual_state and what is live (1 components):\n  ! app/api\n      outputs.password: (sensitive) -> (sensitive)\n      outputs.replicas: 2 -> 3\n\n" +
				planview.NoChangesButDrift + "\n"},
		{name: "out", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Out: out}, wantCalls: "plan", wantOut: human.String(),
			wantErrOut: "Saved the plan of shop/dev to " + out + " (bound to state serial 3). Apply it with: deployer deploy --plan " + out + "\n"},
		{name: "preflight fails", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "dev"}}, Preview: true}, preflight: preflightErr, wantCalls: "preflight", wantErr: preflightErr},
		{name: "unknown environment", opts: PlanOptions{StackOptions: app.StackOptions{Target: app.TargetFlags{Env: "prod"}}},
			wantErr: &exitcode.UsageError{Msg: `environment "prod" is not in deployer.yaml (known: dev): pick one of those or add it under the environments key`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, stdout, stderr := termui.Test("")
			var calls []string
			opts := tt.opts
			opts.IO = ios
			opts.Config = func() (*config.Config, error) { return cfg, nil }
			opts.Plan = func(_ context.Context, req deploy.PlanRequest) (*plan.Plan, error) {
				c, tg, destroy := req.Config, req.Target, req.Destroy
				if req.CheckEngines { // the use case runs the preflight first
					calls = append(calls, "preflight")
					if tt.preflight != nil {
						return nil, tt.preflight
					}
				}
				if c != cfg || tg.Stack != "shop" || tg.Env != "dev" {
					t.Errorf("Plan(%v, %+v)", c, tg)
				}
				if req.Refresh != opts.Refresh { // the plan is reported with its drift (deploy.Reporter.Planned)
					t.Errorf("PlanRequest.Refresh = %v with --refresh %v", req.Refresh, opts.Refresh)
				}
				if destroy {
					calls = append(calls, "plan(destroy "+tg.Service+"/"+tg.Component+")")
				} else {
					calls = append(calls, "plan")
				}
				if tt.noChanges {
					return &plan.Plan{Stack: p.Stack, Environment: p.Environment, Serial: p.Serial}, nil
				}
				return p, nil
			}
			opts.DetectDrift = func(_ context.Context, _ *config.Config, _ deploy.Target, got *plan.Plan) ([]engine.Drift, error) {
				calls = append(calls, "drift")
				return []engine.Drift{{Address: "app/api", Fields: []plan.FieldDiff{{Path: "outputs.password", Old: plan.Masked, New: plan.Masked, Op: "change", Sensitive: true}, {Path: "outputs.replicas", Old: 2, New: 3, Op: "change"}}}}, nil
			}
			opts.PreviewEngines = func(context.Context, *config.Config, deploy.Target, *plan.Plan) (string, error) {
				calls = append(calls, "preview")
				return "Fake preview:\n+ 1 to create\n", nil // the engines head their own previews
			}
			err := runPlan(context.Background(), &opts)
			checkErr(t, err, tt.wantErr)
			if got := strings.Join(calls, " "); got != tt.wantCalls {
				t.Errorf("calls %q, want %q", got, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantOut, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErrOut, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("--out: %v", err)
	}
}

package cli

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// parse runs cmd with argv, capturing the options given to runF.
func parse(t *testing.T, cmd *cobra.Command, argv ...string) error {
	t.Helper()
	cmd.SetArgs(argv)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.ExecuteContext(context.Background())
}

func TestPlanAndDeployFlags(t *testing.T) {
	io, _, _ := Test("")
	f := NewFactory(io)
	for _, c := range []struct {
		argv []string
		want PlanOptions
	}{
		{[]string{"-e", "dev"}, PlanOptions{Target: targetFlags{Env: "dev"}}},
		{[]string{"--env", "prod", "-s", "shop", "--component", "app/api", "--out", "p.json", "--detailed-exitcode"},
			PlanOptions{Target: targetFlags{Stack: "shop", Env: "prod", Component: "app/api"}, Out: "p.json", DetailedExitcode: true}},
		{[]string{"--environment", "dev", "--service", "app", "--destroy"}, PlanOptions{Target: targetFlags{Env: "dev", Service: "app"}, Destroy: true}},
	} {
		var got *PlanOptions
		cmd := NewCmdPlan(f, func(_ context.Context, _ *Factory, o *PlanOptions) error { got = o; return nil })
		cmd.SetGlobalNormalizationFunc(NewRootCmd(f).GlobalNormalizationFunc())
		if err := parse(t, cmd, c.argv...); err != nil {
			t.Fatalf("%v: %v", c.argv, err)
		}
		if diff := cmp.Diff(c.want, *got, cmp.AllowUnexported(PlanOptions{})); diff != "" {
			t.Errorf("%v (-want +got):\n%s", c.argv, diff)
		}
	}

	var got *DeployOptions
	cmd := NewCmdDeploy(f, func(_ context.Context, _ *Factory, o *DeployOptions) error { got = o; return nil })
	if err := parse(t, cmd, "-e", "dev", "--yes", "--lock-timeout", "10m", "--plan", "x.plan", "--parallelism", "3"); err != nil {
		t.Fatal(err)
	}
	want := DeployOptions{Target: targetFlags{Env: "dev"}, Yes: true, LockTimeout: 10 * time.Minute, PlanFile: "x.plan", Parallelism: 3}
	if diff := cmp.Diff(want, *got, cmp.AllowUnexported(DeployOptions{})); diff != "" {
		t.Errorf("deploy flags (-want +got):\n%s", diff)
	}
}

func TestUsageErrorsBeforeAnyBackend(t *testing.T) {
	io, _, _ := Test("")
	f := NewFactory(io)
	never := func(context.Context, *Factory, *DeployOptions) error { t.Fatal("run called"); return nil }
	for _, argv := range [][]string{
		{}, // no environment
		{"-e", "dev", "--service", "a", "--component", "a/b"}, // both
		{"-e", "dev", "--component", "api"},                   // no slash
		{"-e", "dev", "--parallelism", "0"},                   // nothing could run
	} {
		err := parse(t, NewCmdDeploy(f, never), argv...)
		var usage *UsageError
		if !errors.As(err, &usage) {
			t.Errorf("%v: want a usage error, got %v", argv, err)
		}
	}
	err := parse(t, NewCmdUnlock(f, func(context.Context, *UnlockOptions) error { return nil }), "-e", "dev")
	var usage *UsageError
	if !errors.As(err, &usage) || usage.Msg == "" {
		t.Errorf("unlock without --force: want a usage error, got %v", err)
	}
	err = parse(t, NewCmdRestore(f, func(context.Context, *RestoreOptions) error { return nil }), "-e", "dev", "--serial", "2", "--timestamp", "2024-01-01T00:00:00Z")
	if !errors.As(err, &usage) {
		t.Errorf("restore with both --serial and --timestamp: want a usage error, got %v", err)
	}
}

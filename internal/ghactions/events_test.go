package ghactions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// actionsRun is a Reporter under GitHub Actions, its job summary, step
// outputs and stderr kept apart from any other's.
type actionsRun struct {
	r                *Reporter
	summary, outputs string
	stderr           *strings.Builder
}

func newActionsRun(t *testing.T, command string) actionsRun {
	t.Helper()
	dir := t.TempDir()
	a := actionsRun{summary: filepath.Join(dir, "summary.md"), outputs: filepath.Join(dir, "outputs"), stderr: &strings.Builder{}}
	env := map[string]string{"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_STEP_SUMMARY": a.summary, "GITHUB_OUTPUT": a.outputs}
	a.r = NewReporter(func(k string) string { return env[k] }, a.stderr, secrets.NewMasker(), Hints{Remedy: func(err error) string { return err.Error() },
		UnlockCommand: func(rec lockmgr.Record) string { return "deployer unlock --force --lock-id " + rec.LockID }})
	a.r.SetCommand(command)
	return a
}

// written is everything the run wrote: summary, outputs, stderr.
func (a actionsRun) written(t *testing.T) string {
	t.Helper()
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return string(b)
	}
	return "summary:\n" + read(a.summary) + "outputs:\n" + read(a.outputs) + "stderr:\n" + a.stderr.String()
}

// Each event the use cases report writes what the commands wrote by
// calling the Reporter's methods themselves, byte for byte: the drift,
// then the plan; a deploy, then its run's wait; a --all run's stacks and
// outputs, after which the run's error is not annotated again.
func TestEventsWriteWhatTheCommandsWrote(t *testing.T) {
	ctx := context.Background()
	tg := deploy.Target{Stack: "qs", Env: "dev"}
	p := &plan.Plan{Stack: "qs", Environment: "dev", Serial: 3, Summary: plan.Summary{Update: 1},
		Steps: []plan.Step{{Address: "app/api", Service: "app", Component: "api", Kind: "Command", Action: plan.Update}}}
	drift := []engine.Drift{{Address: "app/api", Fields: []plan.FieldDiff{{Path: "outputs.replicas", Old: 2, New: 3, Op: "change"}}}}
	failErr := errors.New("1 component failed")
	out := &deploy.Outcome{Plan: p, Head: statestore.Head{Serial: 4}, Deployment: statestore.Deployment{DeploymentID: "d-1", Status: "failed"},
		Summary:  deploy.Summary{Failed: []engine.Result{{Address: "app/api", Status: engine.StatusFailed, Err: errors.New("exit status 3")}}},
		Upstream: []deploy.UpstreamWait{{Stack: "net", Status: statestore.DeploymentSuccess, DeploymentID: "d-0", Attempt: 1}}}
	results := []runner.StackResult{{Stack: "qs", Dir: "qs", Status: runner.StackFailed, Reason: "exit status 3", Err: errors.New("exit status 3")},
		{Stack: "web", Dir: "web", Status: runner.StackChanges, Plan: p}}
	runErr := errors.New("1 stack(s) failed: qs; the stacks that read them were skipped")

	direct, events := newActionsRun(t, "deployer plan"), newActionsRun(t, "deployer plan")
	direct.r.Drift(tg, drift)
	direct.r.Plan(tg, p, true)
	events.r.Planned(ctx, deploy.Planned{Target: tg, Plan: p, Refreshed: true, Drift: drift})
	direct.r.Plan(tg, p, false)
	events.r.Planned(ctx, deploy.Planned{Target: tg, Plan: p})
	direct.r.Deploy(tg, out, failErr)
	direct.r.RunWait(tg, "r-7", out.Upstream, failErr)
	events.r.Applied(deploy.Applied{Target: tg, Outcome: out, Err: failErr, Run: &deploy.Run{ID: "r-7"}})
	direct.r.Deploy(tg, nil, failErr) // stopped before planning: nothing
	events.r.Applied(deploy.Applied{Target: tg, Err: failErr, Run: &deploy.Run{ID: "r-7"}})
	res := &stateops.RestoreResult{Head: statestore.Head{Serial: 6}, State: &statestore.State{}, RestoredFrom: 2, DeploymentID: "d-2"}
	direct.r.Restore(tg, res)
	events.r.Restored(tg, res)
	for _, res := range results {
		direct.r.Stack("dev", res)
		events.r.StackEnded("dev", res)
	}
	direct.r.Stacks(results)
	direct.r.MarkAnnotated()
	events.r.StacksEnded(ctx, runner.StacksEnded{Env: "dev", Results: results, Err: runErr})
	direct.r.ReportError(runErr)
	events.r.ReportError(runErr)

	if diff := cmp.Diff(direct.written(t), events.written(t)); diff != "" {
		t.Errorf("the events wrote otherwise (-methods +events):\n%s", diff)
	}
	got := events.written(t)
	for _, want := range []string{"### Drift: qs/dev", "changes=true", "::error title=Component app/api failed::exit status 3", "r-7", "Restored the snapshot of serial 2", "failed-stacks=qs", "::error title=Stack qs failed"} {
		if !strings.Contains(got, want) {
			t.Errorf("the events wrote no %q:\n%s", want, got)
		}
	}
	if got := events.stderr.String(); strings.Contains(got, "::error title=deployer plan failed") {
		t.Errorf("the run's error was annotated again after its stacks were:\n%s", got)
	}
}

// A broken lock is one section of the job summary, its data masked and
// escaped, titled with the command that broke it.
func TestLockBrokenSummary(t *testing.T) {
	a := newActionsRun(t, "deployer unlock")
	a.r.LockBroken(lockmgr.Status{Record: lockmgr.Record{LockKey: "stack:shop:env:dev", LockID: "L-1", LockedBy: "ci@runner",
		LockedAt: 1699999400, Metadata: lockmgr.Metadata{PID: 4242, Operation: "deploy"}}, Verdict: lockmgr.Stale, HeartbeatAge: time.Minute})
	want := "summary:\n### deployer unlock: stack:shop:env:dev\n\nBroke lock `stack:shop:env:dev` (lock id `L-1`, held by ci@runner since 2023-11-14T22:03:20Z).\n\n" +
		"outputs:\nstderr:\n"
	if diff := cmp.Diff(want, a.written(t)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

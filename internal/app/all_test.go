package app

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestAllViewPrintsALinePerStackAndATable(t *testing.T) {
	io, out, _ := termui.Test("")
	f := NewFactory(io)
	f.Getenv = func(string) string { return "" }
	v := &allView{io: f.IO, req: AllRequest{Op: runner.OpDeploy, Env: "dev"}, width: 5}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	results := []runner.StackResult{
		{Stack: "root", Dir: "root", Status: runner.StackApplied, Started: at, Finished: at.Add(1500 * time.Millisecond),
			Plan: &plan.Plan{}, Outcome: &deploy.Outcome{Deployment: statestore.Deployment{DeploymentID: "dep-1", ResourcesChanged: statestore.ResourcesChanged{Created: 2}},
				Head: statestore.Head{Serial: 4}}},
		{Stack: "left", Dir: "left", Status: runner.StackFailed, Reason: "component s/c failed", Started: at, Finished: at.Add(time.Second)},
		{Stack: "leaf", Dir: "leaf", Status: runner.StackSkipped, Reason: "producer left failed"},
	}
	for _, r := range results {
		v.done(r)
	}
	v.table(results)
	want := `root   applied     +2 ~0 -0
left   failed      component s/c failed
leaf   skipped     producer left failed

STACK  DIR   STATUS   CHANGES   SERIAL  TIME  NOTE
root   root  applied  +2 ~0 -0  4       1.5s
left   left  failed   -         -       1.0s  component s/c failed
leaf   leaf  skipped  -         -       -     producer left failed

3 stacks in dev: 1 applied, 1 failed, 1 skipped.
`
	if d := cmp.Diff(want, out.String()); d != "" {
		t.Errorf("output (-want +got):\n%s", d)
	}
}

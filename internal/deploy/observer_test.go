package deploy

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/deploytest"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

type finishedLog []core.Finished

func (l *finishedLog) DeploymentFinished(f core.Finished) { *l = append(*l, f) }

// Metrics get the run's own Summary: the counts and failures every other
// renderer shows, "failed" being the steps the engine tried and failed.
func TestObserverGetsTheSummaryOfTheRun(t *testing.T) {
	d := deploytest.NewDiamond(t)
	d.J.Fail["alone"] = true
	sb, err := filestate.New(d.Back)
	if err != nil {
		t.Fatal(err)
	}
	var log finishedLog
	svc := New(Deps{Deps: core.Deps{Store: statestore.New(sb), Locks: d.Locks, Getenv: func(string) string { return "" }, Observer: &log}, Engines: []engine.Engine{deploytest.Engine{J: d.J}}})
	cfgOf := func(name string) *config.Config {
		for _, st := range d.Set.Stacks {
			if st.Name == name {
				return st.Config
			}
		}
		t.Fatalf("no stack %s", name)
		return nil
	}
	var outs []*Outcome
	for _, name := range []string{"root", "alone"} {
		out, _ := svc.Apply(context.Background(), ApplyRequest{Config: cfgOf(name), Target: Target{Stack: name, Env: "dev"}})
		outs = append(outs, out)
	}
	if len(log) != 2 {
		t.Fatalf("observer got %d runs, want 2", len(log))
	}
	for i, want := range []struct {
		key     string
		status  statestore.DeploymentStatus
		created int
		failed  []string
	}{
		{"stack:root:env:dev", statestore.DeploymentSuccess, 1, nil},
		{"stack:alone:env:dev", statestore.DeploymentFailed, 0, []string{"s/c"}},
	} {
		f := log[i]
		if f.LockKey != want.key || f.Operation != "deploy" || f.Status != want.status {
			t.Errorf("run %d: %s %s %s, want %s deploy %s", i, f.LockKey, f.Operation, f.Status, want.key, want.status)
		}
		if d := cmp.Diff(outs[i].Summary, f.Summary, cmpopts.EquateErrors()); d != "" {
			t.Errorf("run %d: the observer's summary is not the outcome's (-outcome +observer):\n%s", i, d)
		}
		var failed []string
		for _, r := range f.Summary.Failed {
			failed = append(failed, r.Address)
		}
		if f.Summary.Created != want.created || !cmp.Equal(failed, want.failed) {
			t.Errorf("run %d: created %d, failed %v; want %d, %v", i, f.Summary.Created, failed, want.created, want.failed)
		}
	}
}

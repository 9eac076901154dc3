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
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// reportLog is a Reporter that keeps what it hears, in order.
type reportLog struct {
	events []string
	plans  []Planned
	runs   []Applied
}

func (l *reportLog) Planned(_ context.Context, e Planned) {
	l.events, l.plans = append(l.events, "planned:"+e.Target.Stack), append(l.plans, e)
}

func (l *reportLog) Applied(e Applied) {
	l.events, l.runs = append(l.events, "applied:"+e.Target.Stack), append(l.runs, e)
}

// driftEngine is the fixture's engine with a Refresh that finds the
// replicas of every component it reads changed outside deployer.
type driftEngine struct{ deploytest.Engine }

func (e driftEngine) Kinds() []engine.Kind {
	kinds := e.Engine.Kinds()
	for i := range kinds {
		kinds[i].Refresh = engine.Coverage{Covered: true}
	}
	return kinds
}

func (driftEngine) Refresh(_ context.Context, req engine.RefreshRequest) (engine.RefreshResponse, error) {
	var out engine.RefreshResponse
	for _, s := range req.Steps {
		out.Drift = append(out.Drift, engine.Drift{Address: s.Address, Fields: []plan.FieldDiff{{Path: "outputs.replicas", Old: 2, New: 3, Op: "change"}}})
	}
	return out, nil
}

// The use cases report what they did to the Reporter they are given, once
// each is done (docs/design.md#reporting): a plan with the review it was
// asked for; a deploy with its outcome, failed or not; plan --refresh
// once, by Refresh, with its drift. The Reporter hears what the caller
// gets back.
func TestReporterHearsEachPlanAndDeploy(t *testing.T) {
	d := deploytest.NewDiamond(t)
	d.J.Fail["alone"] = true
	sb, err := filestate.New(d.Back)
	if err != nil {
		t.Fatal(err)
	}
	log := &reportLog{}
	svc := New(Deps{Deps: core.Deps{Store: statestore.New(sb), Locks: d.Locks, Getenv: func(string) string { return "" }},
		Engines: []engine.Engine{driftEngine{deploytest.Engine{J: d.J}}}, Reporter: log})
	cfgOf := func(name string) *config.Config {
		if st := d.Set.Get(name); st != nil {
			return st.Config
		}
		t.Fatalf("no stack %s", name)
		return nil
	}
	ctx := context.Background()
	root, alone := Target{Stack: "root", Env: "dev"}, Target{Stack: "alone", Env: "dev"}

	review := Review{Comment: true, RunID: "r-7"}
	p, err := svc.Plan(ctx, PlanRequest{Config: cfgOf("root"), Target: root, Review: review})
	if err != nil {
		t.Fatal(err)
	}
	out, err := svc.Apply(ctx, ApplyRequest{Config: cfgOf("root"), Target: root})
	if err != nil {
		t.Fatal(err)
	}
	run := &Run{ID: "r-7", Attempt: 1}
	failed, failErr := svc.Apply(ctx, ApplyRequest{Config: cfgOf("alone"), Target: alone, Run: run})
	if failErr == nil || failed == nil || len(failed.Summary.Failed) == 0 {
		t.Fatalf("deploy of alone: %+v, %v; want a failed component", failed, failErr)
	}
	refreshed, err := svc.Plan(ctx, PlanRequest{Config: cfgOf("root"), Target: root, CheckEngines: true, Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	drift, err := svc.Refresh(ctx, RefreshRequest{Config: cfgOf("root"), Target: root, Plan: refreshed, Review: review})
	if err != nil || len(drift) == 0 {
		t.Fatalf("refresh: %v, %v; want drift", drift, err)
	}

	if want := []string{"planned:root", "applied:root", "applied:alone", "planned:root"}; !cmp.Equal(log.events, want) {
		t.Fatalf("the reporter heard %v, want %v (plan --refresh once, by Refresh)", log.events, want)
	}
	wantPlans := []Planned{
		{Target: root, Plan: p, Review: review},
		{Target: root, Plan: refreshed, Refreshed: true, Drift: drift, Review: review},
	}
	if diff := cmp.Diff(wantPlans, log.plans, cmp.Comparer(func(a, b *plan.Plan) bool { return a == b })); diff != "" {
		t.Errorf("plans (-want +heard):\n%s", diff)
	}
	wantRuns := []Applied{{Target: root, Outcome: out}, {Target: alone, Outcome: failed, Err: failErr, Run: run}}
	if diff := cmp.Diff(wantRuns, log.runs, cmp.Comparer(func(a, b *Outcome) bool { return a == b }), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("deploys (-want +heard):\n%s", diff)
	}
}

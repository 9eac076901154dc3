package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/deploy/deploytest"
)

// runLog is a Reporter that keeps what it hears, in order, with what
// OnDone got.
type runLog struct {
	events []string
	ended  []StacksEnded
}

func (l *runLog) StackEnded(env string, res StackResult) {
	l.events = append(l.events, "reported:"+env+"/"+res.Stack+"="+string(res.Status))
}
func (l *runLog) StacksEnded(_ context.Context, e StacksEnded) {
	l.events = append(l.events, "run ended")
	l.ended = append(l.ended, e)
}

// A run reports each stack to its Reporter right after OnDone, skipped
// ones included, then the run with the results and error RunStacks
// returns and the comment it was asked for (docs/design.md#reporting).
func TestRunStacksReportsEachStackAndTheRun(t *testing.T) {
	d := deploytest.NewDiamond(t)
	d.J.Fail["left"] = true
	log := &runLog{}
	req := request(d, OpDeploy)
	req.Reporter, req.Comment = log, true
	req.OnDone = func(r StackResult) { log.events = append(log.events, "done:"+r.Stack) }
	res, err := RunStacks(context.Background(), req)
	if err == nil {
		t.Fatal("want left failed")
	}
	// Each stack's OnDone is followed at once by its report; the run's
	// report comes last.
	if len(log.events) != 2*len(res)+1 || log.events[len(log.events)-1] != "run ended" {
		t.Fatalf("heard %v; want OnDone and a report per stack, then the run", log.events)
	}
	byStack := map[string]StackStatus{}
	for _, r := range res {
		byStack[r.Stack] = r.Status
	}
	for i := 0; i < 2*len(res); i += 2 {
		name := strings.TrimPrefix(log.events[i], "done:")
		if want := "reported:dev/" + name + "=" + string(byStack[name]); log.events[i+1] != want {
			t.Errorf("after %s heard %q, want %q", log.events[i], log.events[i+1], want)
		}
		delete(byStack, name)
	}
	if len(byStack) != 0 {
		t.Errorf("stacks never reported: %v", byStack)
	}
	e := log.ended[0]
	if e.Env != "dev" || !e.Comment || e.None != "" || len(e.Results) != len(res) || &e.Results[0] != &res[0] || !errors.Is(e.Err, err) {
		t.Errorf("run ended: %+v; want dev, the comment asked for, RunStacks' results and error %v", e, err)
	}
}

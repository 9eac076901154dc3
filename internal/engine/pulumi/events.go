package pulumi

import (
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// replaceWatch collects, from an up's engine events, the URNs of the
// resources Pulumi replaced, so a replace that deployer's plan saw as an
// update is reported as the replace it was.
type replaceWatch struct {
	ch   chan events.EngineEvent
	done chan map[string]bool
}

func watchReplaces() *replaceWatch {
	w := &replaceWatch{ch: make(chan events.EngineEvent), done: make(chan map[string]bool, 1)}
	go func() {
		urns := map[string]bool{}
		for ev := range w.ch { // the Automation API closes ch when the operation ends
			if ev.ResOutputsEvent == nil {
				continue
			}
			switch m := ev.ResOutputsEvent.Metadata; m.Op {
			case apitype.OpReplace, apitype.OpCreateReplacement:
				urns[m.URN] = true
			}
		}
		w.done <- urns
	}()
	return w
}

// wait returns the replaced URNs once the event stream has ended. The
// Automation API closes the stream before Up returns, except when Up failed
// before streaming began: then nothing was replaced, and wait gives up after
// a few seconds rather than blocking.
func (w *replaceWatch) wait() map[string]bool {
	select {
	case urns := <-w.done:
		return urns
	case <-time.After(5 * time.Second):
		return nil
	}
}

package pulumi

import (
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// upEvents is what an up's engine events tell of its resources, by URN:
// those Pulumi replaced, so a replace that deployer's plan saw as an
// update is reported as the replace it was, and those whose step failed
// or got an error,
// so a component Pulumi answered for (an import whose follow-up step it
// refused) is not taken as finished, and every step Pulumi announced (in
// order), which a preview's importGuard reads.
type upEvents struct {
	replaced, failed map[string]bool
	steps            []apitype.StepEventMetadata
}

// eventWatch collects an up's upEvents.
type eventWatch struct {
	ch   chan events.EngineEvent
	done chan upEvents
}

func watchEvents() *eventWatch {
	w := &eventWatch{ch: make(chan events.EngineEvent), done: make(chan upEvents, 1)}
	go func() {
		ev := upEvents{replaced: map[string]bool{}, failed: map[string]bool{}}
		for e := range w.ch { // the Automation API closes ch when the operation ends
			switch {
			case e.ResourcePreEvent != nil:
				ev.steps = append(ev.steps, e.ResourcePreEvent.Metadata)
			case e.ResOpFailedEvent != nil:
				ev.failed[e.ResOpFailedEvent.Metadata.URN] = true
			case e.DiagnosticEvent != nil && e.DiagnosticEvent.Severity == "error" && e.DiagnosticEvent.URN != "":
				ev.failed[e.DiagnosticEvent.URN] = true // an error Pulumi reports on the resource's step
			}
			if e.ResOutputsEvent == nil {
				continue
			}
			switch m := e.ResOutputsEvent.Metadata; m.Op {
			case apitype.OpReplace, apitype.OpCreateReplacement:
				ev.replaced[m.URN] = true
			}
		}
		w.done <- ev
	}()
	return w
}

// wait returns the events once the event stream has ended. The
// Automation API closes the stream before Up returns, except when Up failed
// before streaming began: then nothing was replaced or stepped, and wait
// gives up after a few seconds rather than blocking.
func (w *eventWatch) wait() upEvents {
	select {
	case ev := <-w.done:
		return ev
	case <-time.After(5 * time.Second):
		return upEvents{}
	}
}

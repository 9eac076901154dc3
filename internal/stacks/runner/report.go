package runner

import "context"

// Reporter hears what a run of many stacks did (docs/design.md#reporting):
// the same value the wiring gives the deploy use cases (deploy.Reporter),
// with the events of a run. A Reporter's failures are its own: it returns
// nothing.
type Reporter interface {
	// StackEnded: stack res.Stack of a run in env ended (or was skipped),
	// after StacksRequest.OnDone; one at a time.
	StackEnded(env string, res StackResult)
	// StacksEnded: the run ended, or found no stack to run (None).
	StacksEnded(ctx context.Context, e StacksEnded)
}

// StacksEnded is one run of many stacks, ended.
type StacksEnded struct {
	Env string
	// Results and Err are what RunStacks returns.
	Results []StackResult
	Err     error
	// None, when set, says why the run had no stack to run (no stack
	// changed since --changed-since's revision); Results is then empty.
	None string
	// Comment is StacksRequest.Comment.
	Comment bool
}

// NoReporter hears nothing: the Reporter of a run given none.
type NoReporter struct{}

func (NoReporter) StackEnded(string, StackResult)           {}
func (NoReporter) StacksEnded(context.Context, StacksEnded) {}

var _ Reporter = NoReporter{}

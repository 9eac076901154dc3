package app

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// Reporter is what the use cases report to, whole (docs/design.md#reporting):
// the events of the deploy use cases, of the state and lock operations and
// of the many-stacks runner, and the two the wiring sees itself while it
// opens the backends (a wait for a held lock, a state kept on the runner's
// disk). The Session registers one, the GitHub Actions reporter, with every
// use case it builds and with the --all runner, beside the metrics
// recorder; the commands report nothing themselves.
type Reporter interface {
	deploy.Reporter
	stateops.Reporter
	runner.Reporter
	// LockWait: a lock this process wants is held by h; it waits.
	LockWait(h lockmgr.Record)
	// WarnFileState: the state backend stateURL is a local file.
	WarnFileState(stateURL string)
	// SetCommand names the command that runs ("deployer deploy"), once
	// its flags are bound, for the titles of what it reports.
	SetCommand(path string)
	// ReportError: the command failed with err, printed already; not
	// called for an error that only sets the exit code.
	ReportError(err error)
}

var _ Reporter = (*ghactions.Reporter)(nil)

// nopReporter hears nothing: the Reporter of a Factory without streams.
type nopReporter struct{ deploy.NoReporter }

func (nopReporter) Restored(deploy.Target, *stateops.RestoreResult) {}
func (nopReporter) LockBroken(lockmgr.Status)                       {}
func (nopReporter) StackEnded(string, runner.StackResult)           {}
func (nopReporter) StacksEnded(context.Context, runner.StacksEnded) {}
func (nopReporter) LockWait(lockmgr.Record)                         {}
func (nopReporter) WarnFileState(string)                            {}
func (nopReporter) SetCommand(string)                               {}
func (nopReporter) ReportError(error)                               {}

// reporter is the Reporter the Session registers with the use cases: its
// GitHub Actions reporter (which writes nothing outside Actions); none for
// a Factory built without NewSession or streams.
func (s *Session) reporter() Reporter {
	if s == nil || s.github == nil {
		return nopReporter{}
	}
	return s.github
}

// actions reports whether the process runs under GitHub Actions, whose
// log the Session's stderr is written for (log groups, workflow commands
// neutralised in a --all run's stack lines): how output is written, not a
// report.
func (s *Session) actions() bool { return s.github != nil && s.github.Env().Actions }

// Execute runs the command of root that the arguments name, under ctx
// (cobra's ExecuteContextC), and tells the Session's Reporter which one
// runs once the root command has bound the global flags. It returns the
// command run and its error, for main to print (then ReportError).
func (s *Session) Execute(ctx context.Context, root *cobra.Command) (*cobra.Command, error) {
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if pre != nil {
			if err := pre(cmd, args); err != nil {
				return err
			}
		}
		s.reporter().SetCommand(cmd.CommandPath())
		return nil
	}
	return root.ExecuteContextC(ctx)
}

// ReportError reports the failure of the command, once main has printed
// err, to the Session's Reporter (under GitHub Actions: an ::error
// annotation unless the failure was annotated where it was seen, and a
// held lock's holder in the job summary).
func (s *Session) ReportError(err error) { s.reporter().ReportError(err) }

package exitcode

import "fmt"

// UsageError is a command-line mistake: exit code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// DeployerExitCode is 2 (docs/exit-codes.md).
func (e *UsageError) DeployerExitCode() int { return Usage }

// ExitCodeError asks main for a specific exit code without an error message
// (plan --detailed-exitcode's 2).
type ExitCodeError struct{ Code int }

func (e *ExitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// DeployerExitCode is Code.
func (e *ExitCodeError) DeployerExitCode() int { return e.Code }

package deploy

import "github.com/deployer-dev/deployer/internal/exitcode"

// ExitCode is 2: a target deployer.yaml does not have is a usage error
// (docs/exit-codes.md).
func (e *TargetError) ExitCode() int { return exitcode.Usage }

// ExitCode is 7 (docs/exit-codes.md).
func (e *SkippedError) ExitCode() int { return exitcode.Skipped }

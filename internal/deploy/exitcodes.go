package deploy

import "github.com/deployer-dev/deployer/internal/exitcode"

// DeployerExitCode is 7 (docs/exit-codes.md).
func (e *SkippedError) DeployerExitCode() int { return exitcode.Skipped }

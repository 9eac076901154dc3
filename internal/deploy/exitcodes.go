package deploy

import "github.com/deployer-dev/deployer/internal/exitcode"

// DeployerExitCode is 2: a target deployer.yaml does not have is a usage error
// (docs/exit-codes.md).
func (e *TargetError) DeployerExitCode() int { return exitcode.Usage }

// DeployerExitCode is 7 (docs/exit-codes.md).
func (e *SkippedError) DeployerExitCode() int { return exitcode.Skipped }

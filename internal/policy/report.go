package policy

import "github.com/deployer-dev/deployer/internal/policy/verdict"

// The policy report lives in package verdict, which links no policy engine
// (a plan carries one); these names keep policy's callers reading as before.
type (
	Report              = verdict.Report
	Result              = verdict.Result
	Override            = verdict.Override
	NotOverridableError = verdict.NotOverridableError
	DeniedError         = verdict.DeniedError
	Identity            = verdict.Identity
)

// Status values of Result.Status.
const (
	StatusPass       = verdict.StatusPass
	StatusWarn       = verdict.StatusWarn
	StatusDeny       = verdict.StatusDeny
	StatusOverridden = verdict.StatusOverridden
)

package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/exitcode"
)

// Report is the results of evaluating every policy against one plan:
// `policy` in plan --json and in saved plans (docs/policy.md#where-policies-apply).
type Report struct {
	// Digest is policy.Set.Digest of the files evaluated.
	Digest  string   `json:"digest"`
	Results []Result `json:"results"`
}

// Result is one policy's verdict.
type Result struct {
	Policy      string   `json:"policy"`
	Files       []string `json:"files"`
	Overridable bool     `json:"overridable"`
	Deny        []string `json:"deny,omitempty"`
	Warn        []string `json:"warn,omitempty"`
	// Override is set when the deployment overrides this policy's denies.
	Override *Override `json:"override,omitempty"`
}

// Override is one --override-policy NAME --reason TEXT.
type Override struct {
	Policy string `json:"policy"`
	Reason string `json:"reason"`
	By     string `json:"by,omitempty"`
}

// Status values of Result.Status.
const (
	StatusPass       = "pass"
	StatusWarn       = "warn"
	StatusDeny       = "deny"
	StatusOverridden = "overridden"
)

// Status is "deny" when the policy denies and is not overridden,
// "overridden", "warn" when it only warns, "pass" otherwise.
func (r Result) Status() string {
	switch {
	case len(r.Deny) > 0 && r.Override != nil:
		return StatusOverridden
	case len(r.Deny) > 0:
		return StatusDeny
	case len(r.Warn) > 0:
		return StatusWarn
	}
	return StatusPass
}

// Denied returns the results that deny and are not overridden.
func (r *Report) Denied() []Result {
	if r == nil {
		return nil
	}
	var out []Result
	for _, x := range r.Results {
		if x.Status() == StatusDeny {
			out = append(out, x)
		}
	}
	return out
}

// Override applies overrides to the report's denies. Errors: an override
// naming no policy of the report (a typo must not read as applied), an
// override of a policy that is not overridable, an override without a
// reason. An override of a policy that does not deny is kept unused.
func (r *Report) Override(overrides []Override) error {
	for _, o := range overrides {
		if strings.TrimSpace(o.Reason) == "" {
			return fmt.Errorf("--override-policy %s needs --reason TEXT: say why the policy is overridden", o.Policy)
		}
		i := slices.IndexFunc(r.Results, func(x Result) bool { return x.Policy == o.Policy })
		if i < 0 {
			return fmt.Errorf("--override-policy %s: no such policy (policies: %s)", o.Policy, strings.Join(r.names(), ", "))
		}
		res := &r.Results[i]
		if len(res.Deny) == 0 {
			continue
		}
		if !res.Overridable {
			return &NotOverridableError{Policy: o.Policy}
		}
		res.Override = &o
	}
	return nil
}

func (r *Report) names() []string {
	var out []string
	for _, x := range r.Results {
		out = append(out, x.Policy)
	}
	return out
}

// NotOverridableError: an override of a policy that declares itself not
// overridable.
type NotOverridableError struct{ Policy string }

func (e *NotOverridableError) Error() string {
	return fmt.Sprintf("policy %s is not overridable: change the plan (or the policy, reviewed as code)", e.Policy)
}

// DeniedError: the plan is denied by the policies in Results.
type DeniedError struct{ Results []Result }

func (e *DeniedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "denied by policy: ")
	for i, r := range e.Results {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", r.Policy, strings.Join(r.Deny, "; "))
	}
	return b.String()
}

// DeployerExitCode is 5 (docs/exit-codes.md).
func (e *NotOverridableError) DeployerExitCode() int { return exitcode.Policy }

// DeployerExitCode is 5 (docs/exit-codes.md).
func (e *DeniedError) DeployerExitCode() int { return exitcode.Policy }

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
	// OverridableBy and AllowLocalOverride are who may override the
	// policy (its METADATA, docs/policy.md#overrides).
	OverridableBy      []string `json:"overridable_by,omitempty"`
	AllowLocalOverride bool     `json:"allow_local_override,omitempty"`
	Deny               []string `json:"deny,omitempty"`
	Warn               []string `json:"warn,omitempty"`
	// Override is set when the deployment overrides this policy's denies.
	Override *Override `json:"override,omitempty"`
}

// Override is one --override-policy NAME --reason TEXT, and who asked for
// it once Report.Override accepted it.
type Override struct {
	Policy string `json:"policy"`
	Reason string `json:"reason"`
	By     string `json:"by,omitempty"`
	// Verified is true when a CI provider vouches for By (GitHub Actions'
	// OIDC token or API); false for a local user's override.
	Verified bool `json:"verified"`
	// Source says where By comes from.
	Source string `json:"by_source,omitempty"`
}

// Identity is who asks for an override (docs/policy.md#overrides).
type Identity struct {
	// Login is the GitHub login when Verified, else the local user
	// (user@host).
	Login string
	// Source says where Login comes from ("the actor claim of the GitHub
	// Actions OIDC token", ...), for records and refusals.
	Source string
	// Verified: a CI provider vouches for Login. Never true for
	// GITHUB_ACTOR or USER alone: the caller sets those.
	Verified bool
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

// Override applies overrides, asked for by who, to the report's denies.
// Errors: an override naming no policy of the report (a typo must not read
// as applied), an override without a reason, and *NotOverridableError for
// a policy that is not overridable, a verified identity its overridable_by
// does not list, or an unverified one (outside CI) when it does not say
// allow_local_override. An override of a policy that does not deny is
// kept unused.
func (r *Report) Override(overrides []Override, who Identity) error {
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
		if err := res.mayOverride(who); err != nil {
			return err
		}
		o.By, o.Verified, o.Source = who.Login, who.Verified, who.Source
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

// mayOverride is nil when who may override res: a verified identity listed
// in OverridableBy (GitHub logins, any case), or an unverified one when
// AllowLocalOverride.
func (res *Result) mayOverride(who Identity) error {
	if who.Verified {
		if slices.ContainsFunc(res.OverridableBy, func(l string) bool { return strings.EqualFold(l, who.Login) }) {
			return nil
		}
	} else if res.AllowLocalOverride {
		return nil
	}
	return &NotOverridableError{Policy: res.Policy, Who: &who, Allowed: res.OverridableBy}
}

// NotOverridableError: an override of a policy that is not overridable, or
// not by Who (set then): an identity its overridable_by does not list
// (Allowed), or one no CI provider vouches for.
type NotOverridableError struct {
	Policy  string
	Who     *Identity
	Allowed []string
}

func (e *NotOverridableError) Error() string {
	switch {
	case e.Who == nil:
		return fmt.Sprintf("policy %s is not overridable: change the plan (or the policy, reviewed as code)", e.Policy)
	case !e.Who.Verified:
		msg := fmt.Sprintf("policy %s may not be overridden by %q (%s, not verified): outside CI no one vouches for who you are", e.Policy, e.Who.Login, e.Who.Source)
		if len(e.Allowed) > 0 {
			msg += fmt.Sprintf("; run the deploy from GitHub Actions as one of overridable_by: %s", strings.Join(e.Allowed, ", "))
		} else {
			msg += "; it lists no one in overridable_by for GitHub Actions either"
		}
		return msg + ", or have the policy say allow_local_override: true in its METADATA (docs/policy.md#overrides)"
	}
	return fmt.Sprintf("policy %s may not be overridden by %q (%s): overridable_by: %s (docs/policy.md#overrides)",
		e.Policy, e.Who.Login, e.Who.Source, strings.Join(e.Allowed, ", "))
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

package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// githubLogin is what GitHub accepts as a user login: letters, digits and
// single hyphens, not at either end, at most 39 characters.
var githubLogin = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)

// readOverrideMetadata reads who may override p from a package METADATA
// annotation's custom keys (docs/policy.md#overrides): overridable
// (false only), overridable_by (GitHub logins) and allow_local_override.
// Errors name the file and line and what is allowed.
func (p *Policy) readOverrideMetadata(a *ast.Annotations) error {
	where := func(format string, args ...any) error {
		return fmt.Errorf("policy %s: %s: METADATA custom.%s (docs/policy.md#overrides)", p.Name, a.Location, fmt.Sprintf(format, args...))
	}
	if v, ok := a.Custom[RuleOverridable]; ok {
		switch v {
		case false:
			p.notOverridable = true
		case true:
			if _, listed := a.Custom[MetaOverridableBy]; !listed {
				return where("overridable: true no longer makes a policy overridable by anyone: list who may override in overridable_by: [LOGIN, ...]")
			}
		default:
			return where("overridable must be false (or left out), got %v", v)
		}
	}
	if v, ok := a.Custom[MetaOverridableBy]; ok {
		list, ok := v.([]any)
		if !ok {
			return where("overridable_by must be a list of GitHub logins ([alice, bob]), got %v", v)
		}
		for _, x := range list {
			login, ok := x.(string)
			switch {
			case ok && strings.Contains(login, "/"):
				return where("overridable_by: teams (%s) are not supported: list the GitHub logins", login)
			case !ok || !githubLogin.MatchString(login):
				return where("overridable_by: %q is not a GitHub login (letters, digits and single hyphens, at most 39)", fmt.Sprint(x))
			}
			if !slices.Contains(p.OverridableBy, login) {
				p.OverridableBy = append(p.OverridableBy, login)
			}
		}
	}
	if v, ok := a.Custom[MetaAllowLocalOverride]; ok {
		b, ok := v.(bool)
		if !ok {
			return where("allow_local_override must be true or false, got %v", v)
		}
		p.AllowLocalOverride = p.AllowLocalOverride || b
	}
	return nil
}

package ghactions

import (
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// The job summary and the pull request comment show the policies' results
// under the plan: a row per message with its level and whether it is
// overridden, then the policies that pass; a plan checked against no
// policy shows no such table.
func TestPlanSummaryAndCommentShowThePolicyTable(t *testing.T) {
	p := &plan.Plan{Stack: "shop", Environment: "production", Policy: &policy.Report{Digest: "sha256:abc", Results: []policy.Result{
		{Policy: "command_download_shell", Overridable: true, Deny: []string{"tools/setup: command.create pipes a download into a shell: curl x | sh"}},
		{Policy: "freeze", Overridable: true, Warn: []string{"a Friday deploy to production"}},
		{Policy: "rds_no_replace", Overridable: true, Deny: []string{"data/db: replace of an RDS instance"},
			Override: &policy.Override{Policy: "rds_no_replace", Reason: "planned migration", By: "alice"}},
		{Policy: "rds_protection", Deny: []string{"data/db: RDS in production needs deletion.protection: true"}},
		{Policy: "tags", Overridable: true},
	}}}
	want := "No changes. Infrastructure matches the configuration.\n\n" +
		"**Policy:** 5 policies: 2 deny, 1 overridden, 1 warn, 1 pass.\n\n" +
		"| Policy | Level | Message | Overridden |\n|---|---|---|---|\n" +
		"| `command_download_shell` | deny | tools/setup: command.create pipes a download into a shell: curl x \\| sh | no |\n" +
		"| `freeze` | warn | a Friday deploy to production | – |\n" +
		"| `rds_no_replace` | deny | data/db: replace of an RDS instance | yes, by alice: planned migration |\n" +
		"| `rds_protection` | deny | data/db: RDS in production needs deletion.protection: true | no (not overridable) |\n\n" +
		"Pass: `tags`.\n\n"
	tgt := deploy.Target{Stack: "shop", Env: "production"}
	if got := planSummary(sanitize.Masked{}, "deployer plan", tgt, p); got != "### deployer plan: shop/production\n\n"+want {
		t.Errorf("job summary:\n%s\nwant the policy table:\n%s", got, want)
	}
	if _, body := planComment(tgt, p, "", func(s string) string { return s }); !strings.Contains(body, want) {
		t.Errorf("comment:\n%s\nwant the policy table:\n%s", body, want)
	}

	p.Policy.Results = p.Policy.Results[4:]
	if got := planSummary(sanitize.Masked{}, "deployer plan", tgt, p); !strings.HasSuffix(got, "**Policy:** 1 policy: 0 deny, 0 overridden, 0 warn, 1 pass.\n\nPass: `tags`.\n\n") {
		t.Errorf("every policy passing:\n%s", got)
	}
	p.Policy = nil
	if got := planSummary(sanitize.Masked{}, "deployer plan", tgt, p); strings.Contains(got, "Policy") {
		t.Errorf("no policies, no table:\n%s", got)
	}
}

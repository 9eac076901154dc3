package ghactions

import (
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// writePolicyTable writes the results of the policies a plan was checked
// against (docs/policy.md#where-policies-apply) as a Markdown table: one
// row per deny or warn message (policy, level, message, overridden?), then
// the policies that pass, each message masked, then escaped, by esc.
// Nothing when r is nil (no policies).
func writePolicyTable(b *strings.Builder, esc sanitize.Masked, r *policy.Report) {
	if r == nil {
		return
	}
	var passed []string
	counts := map[string]int{}
	for _, x := range r.Results {
		counts[x.Status()]++
		if x.Status() == policy.StatusPass {
			passed = append(passed, "`"+esc.CodeSpan(x.Policy)+"`")
		}
	}
	noun := "policies"
	if len(r.Results) == 1 {
		noun = "policy"
	}
	fmt.Fprintf(b, "**Policy:** %d %s: %d deny, %d overridden, %d warn, %d pass.\n\n", len(r.Results), noun,
		counts[policy.StatusDeny], counts[policy.StatusOverridden], counts[policy.StatusWarn], counts[policy.StatusPass])
	if len(passed) < len(r.Results) {
		b.WriteString("| Policy | Level | Message | Overridden |\n|---|---|---|---|\n")
		for _, x := range r.Results {
			for _, m := range x.Deny {
				fmt.Fprintf(b, "| `%s` | deny | %s | %s |\n", esc.CodeSpan(x.Policy), esc.Markdown(m), overriddenCell(esc, x))
			}
			for _, m := range x.Warn {
				fmt.Fprintf(b, "| `%s` | warn | %s | – |\n", esc.CodeSpan(x.Policy), esc.Markdown(m))
			}
		}
		b.WriteString("\n")
	}
	if len(passed) > 0 {
		fmt.Fprintf(b, "Pass: %s.\n\n", strings.Join(passed, ", "))
	}
}

// overriddenCell says whether a denying policy is overridden, by whom and
// why, or that it cannot be.
func overriddenCell(esc sanitize.Masked, x policy.Result) string {
	switch {
	case x.Override != nil:
		return fmt.Sprintf("yes, by %s: %s", esc.Markdown(x.Override.By), esc.Markdown(x.Override.Reason))
	case !x.Overridable:
		return "no (not overridable)"
	}
	return "no"
}

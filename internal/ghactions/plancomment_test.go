package ghactions

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
)

// Errors of failed stacks are masked and cut to share the comment: 30
// stacks failing with 20,000-line errors holding a secret give one comment
// under GitHub's limit, a section for each, no secret.
func TestStacksCommentMasksAndSharesHugeErrors(t *testing.T) {
	const secret = "s3cr3t-value"
	mask := func(s string) string { return strings.ReplaceAll(s, secret, "***") }
	var results []runner.StackResult
	for i := range 30 {
		msg := strings.Repeat(fmt.Sprintf("line of stack %d with password %s ```\n", i, secret), 20000)
		results = append(results, runner.StackResult{Stack: fmt.Sprintf("s%02d", i), Dir: fmt.Sprintf("s%02d", i),
			Status: runner.StackFailed, Err: errors.New(msg)})
	}
	results = append(results, runner.StackResult{Stack: "after", Dir: "after", Status: runner.StackSkipped, Reason: "producer s29 failed"})
	marker, body := stacksComment("dev", "infra/live", results, "", "https://github.com/acme/infra/actions/runs/1", mask, remedy)
	if marker != "<!-- deployer-plan all environment=dev root=infra/live -->" || !strings.HasPrefix(body, marker+"\n") {
		t.Errorf("marker %q, body starts %q", marker, body[:80])
	}
	if n := runeLen(body); n > MaxCommentChars || n < MaxCommentChars-2000 {
		t.Errorf("the comment has %d characters, want just under %d", n, MaxCommentChars)
	}
	for _, want := range []string{"**31 stacks:** 0 with changes, 0 without changes, 30 failed, 1 skipped.",
		"| `after` | `after` | skipped | - | producer s29 failed |", "**Plans are cut to share the comment**", "line of stack 29 with password *** ```\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
	// Each error's code block has a fence longer than the backticks in it.
	if strings.Contains(body, secret) || strings.Count(body, "\n````text\n") != 30 || strings.Count(body, "\n````\n\n</details>") != 30 ||
		strings.Count(body, "<details>") != 30 ||
		strings.Count(body, "</details>") != 30 {
		t.Errorf("want 30 closed sections, no secret, code blocks closed:\n%s", body[len(body)-400:])
	}
	// The marker of one stack's comment is not found in an --all comment.
	if strings.Contains(body, commentMarker(deploy.Target{Stack: "s00", Env: "dev"})) {
		t.Error("the --all comment holds a stack's marker")
	}
}

// createPlan creates n components, each with a field of size characters.
func createPlan(n, size int) *plan.Plan {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Summary: plan.Summary{Create: n}}
	for i := range n {
		p.Steps = append(p.Steps, plan.Step{Address: fmt.Sprintf("s/c%03d", i), Service: "s", Component: fmt.Sprintf("c%03d", i),
			Kind: "Command", Action: plan.Create, Diffs: []plan.FieldDiff{{Path: "description", Op: plan.OpAdd, New: strings.Repeat("d", size)}}})
	}
	return p
}

// A short plan stays whole while 20 long ones share the rest of the room
// equally; with no stack to plan the comment says why.
func TestStacksCommentSharesTheRoomFairly(t *testing.T) {
	results := []runner.StackResult{{Stack: "small", Dir: "small", Status: runner.StackChanges, Plan: createPlan(1, 10)}}
	for i := range 20 {
		results = append(results, runner.StackResult{Stack: fmt.Sprintf("big%02d", i), Dir: "d", Status: runner.StackChanges, Plan: createPlan(200, 100)})
	}
	_, body := stacksComment("dev", ".", results, "", "", func(s string) string { return s }, remedy)
	if n := runeLen(body); n > MaxCommentChars {
		t.Fatalf("the comment has %d characters", n)
	}
	sections := strings.Split(body, "<details><summary><code>")[1:]
	if len(sections) != 21 || !strings.Contains(sections[0], "c000 (Command) create") || !strings.HasSuffix(strings.TrimSpace(sections[0]), "</details>") {
		t.Fatalf("want the small plan whole, then 20 sections: %d sections\n%s", len(sections), sections[0])
	}
	least, most := MaxCommentChars, 0
	for _, s := range sections[1:] {
		least, most = min(least, runeLen(s)), max(most, runeLen(s))
	}
	if least < 2000 || most-least > 300 {
		t.Errorf("the long plans should share the room equally: sections of %d to %d characters", least, most)
	}
	_, body = stacksComment("dev", ".", nil, "No stack changed since origin/main.", "", func(s string) string { return s }, remedy)
	if !strings.HasSuffix(body, "### deployer plan --all: dev\n\nNo stack changed since origin/main.\n\n") {
		t.Errorf("with no stack planned:\n%s", body)
	}
}

// A replace across engines says, in the job summary, which engine deletes
// the existing instance and what that delete runs.
func TestPlanSummaryReplaceAcrossEngines(t *testing.T) {
	runs := "./down.sh"
	p := &plan.Plan{Stack: "s", Environment: "dev", Summary: plan.Summary{Replace: 1}, Steps: []plan.Step{{
		Address: "app/thing", Service: "app", Component: "thing", Kind: "PulumiResource", Action: plan.Replace,
		Diffs:     []plan.FieldDiff{{Path: plan.PathKind, Old: "Command", New: "PulumiResource", Op: plan.OpChange, ForcesReplacement: true}},
		DeletedBy: "command", Runs: &runs,
	}}}
	sum := planSummary(sanitize.Masked{}, "plan", deploy.Target{Stack: "s", Env: "dev"}, p)
	if !strings.Contains(sum, "the command engine deletes the existing Command first, then the new PulumiResource is created<br>delete runs `./down.sh`") {
		t.Errorf("job summary does not say who deletes and what runs:\n%s", sum)
	}
}

// remedy words an error as the CLI's Remedy does one without a hint.
func remedy(err error) string { return err.Error() }

// The job summary and the pull request comment show the plan's Changes to
// Outputs, as the terminal does: the output, its marker and its old and
// new values, a secret one (sensitive), a new value (known after apply);
// an output change alone is a change, not "No changes".
func TestPlanSummaryShowsChangesToOutputs(t *testing.T) {
	p := &plan.Plan{Stack: "s", Environment: "dev", Summary: plan.Summary{Update: 1}, Steps: []plan.Step{{
		Address: "app/api", Service: "app", Component: "api", Kind: "Command", Action: plan.Update,
		Diffs: []plan.FieldDiff{{Path: "v", Old: "1", New: "2", Op: plan.OpChange}},
	}}, Outputs: []plan.FieldDiff{
		{Path: "api_token", Op: plan.OpChange, Old: plan.Masked, New: plan.KnownAfterApply, Sensitive: true, Unknown: true},
		{Path: "api_url", Op: plan.OpChange, Old: "http://api-1.local", New: plan.KnownAfterApply, Unknown: true},
		{Path: "limits", Op: plan.OpRemove, Old: map[string]any{"rps": 5}},
		{Path: "web_url", Op: plan.OpAdd, New: plan.KnownAfterApply, Unknown: true},
	}}
	sum := planSummary(sanitize.Masked{}, "plan", deploy.Target{Stack: "s", Env: "dev"}, p)
	want := "**Changes to Outputs:**\n\n| Output | Change |\n|---|---|\n" +
		"| `api_token` | ~ `(sensitive)` → (known after apply) |\n" +
		"| `api_url` | ~ `\"http://api-1.local\"` → (known after apply) |\n" +
		"| `limits` | - `{\"rps\":5}` → (removed) |\n" +
		"| `web_url` | + (known after apply) |\n"
	if !strings.Contains(sum, want) {
		t.Errorf("job summary lacks\n%s\nin\n%s", want, sum)
	}

	only := &plan.Plan{Stack: "s", Environment: "dev", Summary: plan.Summary{NoOp: 1},
		Steps:   []plan.Step{{Address: "app/api", Service: "app", Component: "api", Kind: "Command", Action: plan.NoOp}},
		Outputs: []plan.FieldDiff{{Path: "limits", Op: plan.OpRemove, Old: map[string]any{"rps": 5}}}}
	sum = planSummary(sanitize.Masked{}, "plan", deploy.Target{Stack: "s", Env: "dev"}, only)
	if strings.Contains(sum, "No changes") || !strings.Contains(sum, "| `limits` | - `{\"rps\":5}` → (removed) |") {
		t.Errorf("an output change alone:\n%s", sum)
	}
}

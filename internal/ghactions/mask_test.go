package ghactions

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/stacks/runner"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// markupSecret changes under every escaping Markdown and a table need.
const markupSecret = "Hunter_2024*x|y"

// secretPlan quotes markupSecret in every place a plan carries data: a
// field that is not secret by name, a delete command, a policy message, an
// override's reason.
func secretPlan() *plan.Plan {
	runs := "drop --token " + markupSecret
	return &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "qs", Environment: "dev", Summary: plan.Summary{Create: 1, Delete: 1},
		Steps: []plan.Step{
			{Address: "app/db", Service: "app", Component: "db", Kind: "Command", Action: plan.Create,
				Diffs: []plan.FieldDiff{{Path: "note", Op: plan.OpAdd, New: "uses " + markupSecret}}},
			{Address: "app/old", Service: "app", Component: "old", Kind: "Command", Action: plan.Delete, Runs: &runs},
		},
		Policy: &policy.Report{Results: []policy.Result{
			{Policy: "echo", Overridable: true, Deny: []string{"saw " + markupSecret}, Warn: []string{"warn " + markupSecret},
				Override: &policy.Override{Policy: "echo", By: "alice", Reason: "ok " + markupSecret}},
		}}}
}

// Data is masked before it is escaped: a secret that Markdown escaping
// would change (Hunter\_2024\*x\|y) is still *** in the job summary (plan
// and failed deploy) and in every pull request comment, policy table
// included.
func TestSecretsAreMaskedBeforeMarkdownEscaping(t *testing.T) {
	m := secrets.NewMasker()
	m.Add(markupSecret)
	summary := filepath.Join(t.TempDir(), "summary.md")
	env := map[string]string{"GITHUB_STEP_SUMMARY": summary}
	r := NewReporter(func(k string) string { return env[k] }, io.Discard, m, Hints{Remedy: func(err error) string { return err.Error() }})
	tgt := deploy.Target{Stack: "qs", Env: "dev"}
	r.Plan(tgt, secretPlan(), false)
	failed := engine.Result{Address: "app/db", Status: engine.StatusFailed, Err: errors.New("exit status 3: failing with " + markupSecret)}
	r.Deploy(tgt, &deploy.Outcome{Plan: secretPlan(), Deployment: statestore.Deployment{DeploymentID: "d-1", Status: "failed"},
		Summary: deploy.Summary{Failed: []engine.Result{failed}}}, errors.New("1 component failed"))
	data, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	res := runner.StackResult{Stack: "qs", Dir: "qs", Status: runner.StackFailed, Err: errors.New("failing with " + markupSecret), Reason: "x " + markupSecret}
	_, comment := planComment(tgt, secretPlan(), "", m.Mask)
	_, all := stacksComment("dev", ".", []runner.StackResult{res, {Stack: "b", Dir: "b", Status: runner.StackChanges, Plan: secretPlan()}},
		"", "", m.Mask, func(err error) string { return err.Error() })
	section := runSection("r1", tgt, secretPlan(), "", m.Mask)
	for where, text := range map[string]string{"job summary": string(data), "plan comment": comment, "--all comment": all,
		"run comment": section.merge("")} {
		if i := strings.Index(text, "Hunter"); i >= 0 {
			t.Errorf("the %s shows the secret: %q", where, text[max(0, i-60):min(len(text), i+60)])
		}
	}
}

// An annotation masks its data before it %-escapes it: a secret holding
// % or a newline is *** in the workflow command too.
func TestAnnotationsMaskBeforeEscaping(t *testing.T) {
	const secret = "Hunter%2024\nline2"
	m := secrets.NewMasker()
	m.Add(secret)
	var out strings.Builder
	env := map[string]string{"GITHUB_ACTIONS": "true"}
	r := NewReporter(func(k string) string { return env[k] }, m.Writer(&out), m, Hints{Remedy: func(err error) string { return err.Error() }})
	failed := engine.Result{Address: "app/db", Status: engine.StatusFailed, Err: errors.New("failing with " + secret)}
	r.Deploy(deploy.Target{Stack: "qs", Env: "dev"}, &deploy.Outcome{Plan: secretPlan(), Deployment: statestore.Deployment{DeploymentID: "d-1"},
		Summary: deploy.Summary{Failed: []engine.Result{failed}}}, errors.New("1 component failed"))
	if !strings.Contains(out.String(), "::error title=Component app/db failed::") || strings.Contains(out.String(), "Hunter") {
		t.Errorf("the annotation should be written with the secret masked:\n%s", out.String())
	}
}

package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/ghactions"
)

// Errors of failed stacks are masked and cut to share the comment: 30
// stacks failing with 20,000-line errors holding a secret give one comment
// under GitHub's limit, a section for each, no secret.
func TestStacksCommentMasksAndSharesHugeErrors(t *testing.T) {
	const secret = "s3cr3t-value"
	mask := func(s string) string { return strings.ReplaceAll(s, secret, "***") }
	var results []deploy.StackResult
	for i := range 30 {
		msg := strings.Repeat(fmt.Sprintf("line of stack %d with password %s ```\n", i, secret), 20000)
		results = append(results, deploy.StackResult{Stack: fmt.Sprintf("s%02d", i), Dir: fmt.Sprintf("s%02d", i),
			Status: deploy.StackFailed, Err: errors.New(msg)})
	}
	results = append(results, deploy.StackResult{Stack: "after", Dir: "after", Status: deploy.StackSkipped, Reason: "producer s29 failed"})
	marker, body := stacksComment("dev", "infra/live", results, "", "https://github.com/acme/infra/actions/runs/1", mask)
	if marker != "<!-- deployer-plan all environment=dev root=infra/live -->" || !strings.HasPrefix(body, marker+"\n") {
		t.Errorf("marker %q, body starts %q", marker, body[:80])
	}
	if n := runeLen(body); n > ghactions.MaxCommentChars || n < ghactions.MaxCommentChars-2000 {
		t.Errorf("the comment has %d characters, want just under %d", n, ghactions.MaxCommentChars)
	}
	for _, want := range []string{"**31 stacks:** 0 with changes, 0 without changes, 30 failed, 1 skipped.",
		"| `after` | `after` | skipped | - | producer s29 failed |", "**Plans are cut to share the comment**", "line of stack 29 with password *** '''\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
	if strings.Contains(body, secret) || strings.Count(body, "```")%2 != 0 || strings.Count(body, "<details>") != 30 ||
		strings.Count(body, "</details>") != 30 {
		t.Errorf("want 30 closed sections, no secret, code blocks closed:\n%s", body[len(body)-400:])
	}
	// The marker of one stack's comment is not found in an --all comment.
	if strings.Contains(body, commentMarker(deploy.Target{Stack: "s00", Env: "dev"})) {
		t.Error("the --all comment holds a stack's marker")
	}
}

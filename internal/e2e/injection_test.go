//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// injectionYAML: api gets a config key that closes a code fence, writes a
// workflow command and terminal control sequences; old, deleted by the
// second plan, has a delete command that does the same; zz's create comes
// after them in every view.
const injectionYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  a:
    components:
      api:
        kind: Command
        config:
          name: api
KEY
        command: {create: "cat >/dev/null", update: "cat >/dev/null", delete: "true"}
OLD
`

const (
	hostileKey = `          "k` + "```" + `\n**fake bold**\n::warning title=key::pwned-by-key\r\e[31m": v`
	oldComp    = `      old:
        kind: Command
        command: {create: "cat >/dev/null", delete: "echo bye\n::warning title=del::pwned-by-delete\r\e]0;t\a"}`
	zzService = `  zz:
    components:
      web: {kind: Command, command: {create: "cat >/dev/null"}}`
)

// checkPrinted fails when out holds a control character or a line that
// starts one of the workflow commands planted in data (deployer's own
// annotations, which quote the data %-escaped, are not).
func checkPrinted(t *testing.T, where, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			t.Errorf("%s holds the control byte %#x: %q", where, c, out[max(0, i-40):min(len(out), i+40)])
			break
		}
	}
	for line := range strings.Lines(out) {
		cmd := strings.TrimLeft(line, " \t")
		for _, planted := range []string{"::warning title=key::", "::warning title=del::", "::error title=lock::", "::warning::pwned", "::notice::pwned"} {
			if strings.HasPrefix(cmd, planted) {
				t.Errorf("%s writes a workflow command from data: %q", where, line)
			}
		}
	}
}

// Config keys and delete commands are printed through the sanitiser: on
// the terminal and in the job summary no control character and no
// workflow command; in the pull request comment the diff's code fence is
// longer than any run of backticks, so the plan after the key (zz's
// create, the counts, the link) stays outside it and no bold text appears.
func TestHostileKeysAndCommandsAreSanitisedEverywhere(t *testing.T) {
	g := newFakeGitHub(t)
	p := newProject(t, strings.NewReplacer("KEY\n", "", "OLD", oldComp).Replace(injectionYAML))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.NewReplacer("KEY", hostileKey, "OLD", zzService).Replace(injectionYAML))
	p.env = prEnv(t, g)
	r := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode", "--github-comment")
	checkPrinted(t, "plan's output", r.stdout+r.stderr)
	for _, want := range []string{`+ k` + "```" + `\n**fake bold**\n::warning title=key::pwned-by-key\r\x1b[31m: "v"`,
		"runs: echo bye\n            \\::warning title=del::pwned-by-delete\\r\\x1b]0;t\\a\n", "+ web (Command) create"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the plan should show %q:\n%s", want, r.stdout)
		}
	}
	summary := string(p.readAbs(envValue(p.env, "GITHUB_STEP_SUMMARY")))
	checkPrinted(t, "the job summary", summary)

	comments, _ := g.snapshot()
	if len(comments) != 1 {
		t.Fatalf("want one comment, got %d\n%s", len(comments), r)
	}
	body := comments[0].Body
	checkPrinted(t, "the comment", body)
	outside := markdownOutsideCode(t, body)
	for _, hidden := range []string{"fake bold", "pwned"} {
		if strings.Contains(outside, hidden) {
			t.Errorf("%q is outside a code block or span of the comment:\n%s", hidden, body)
		}
	}
	for _, want := range []string{"Plan:", "Workflow run"} {
		if !strings.Contains(outside, want) {
			t.Errorf("%q is hidden in a code block of the comment:\n%s", want, body)
		}
	}
	if !strings.Contains(body, "\n+   web (Command) create\n") {
		t.Errorf("zz's create is missing from the comment's diff:\n%s", body)
	}
}

// markdownOutsideCode is the text of md (GitHub's CommonMark) outside code
// blocks and code spans, each text node on a line; it fails on emphasis.
func markdownOutsideCode(t *testing.T, md string) string {
	t.Helper()
	src := []byte(md)
	var b strings.Builder
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.CodeSpan:
			return ast.WalkSkipChildren, nil
		case *ast.Emphasis:
			if strings.Contains(string(nodeText(n, src)), "bold") {
				t.Errorf("the comment has emphasis from data: %q", nodeText(n, src))
			}
		case *ast.Text:
			b.Write(n.Segment.Value(src))
			b.WriteByte('\n')
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

func nodeText(n ast.Node, src []byte) []byte {
	var out []byte
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if tx, ok := c.(*ast.Text); ok {
			out = append(out, tx.Segment.Value(src)...)
		}
		out = append(out, nodeText(c, src)...)
	}
	return out
}

// envValue is the value of NAME=... in env.
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func (p *project) readAbs(path string) []byte {
	p.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	return data
}

// A planted lock record (written by whoever can write the lock backend)
// is shown through the sanitiser: its holder, host and operation print no
// control character and no workflow command on the terminal, in the
// annotation, the job summary and state locks, and the suggested unlock
// command quotes its lock id, so pasting it runs deployer unlock only.
func TestHostileLockRecordIsSanitised(t *testing.T) {
	p := newProject(t, "stack: qs\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\nservices: {s: {components: {c: {kind: Command, command: {create: \"true\"}}}}}\n")
	now := time.Now().Unix()
	rec, _ := json.Marshal(map[string]any{
		"lockKey": "stack:qs:env:dev", "lockId": "x; touch PWNED #", "lockedBy": "mallory\n::error title=lock::pwned-by-holder\x1b[2J",
		"lockedAt": now, "expiresAt": now + 3600, "lastHeartbeat": now, "fence": 1,
		"metadata": map[string]any{"hostname": "host\r\x1b]0;pwned\x07", "pid": 1, "operation": "deploy\n::warning::pwned-by-operation",
			"user": "u\x1b[31m", "command": "c\n::notice::pwned-by-command"},
	})
	p.write(".deployer/locks/stack%3Aqs%3Aenv%3Adev.json", string(rec))
	summary := filepath.Join(t.TempDir(), "summary.md")
	p.env = []string{"GITHUB_ACTIONS=true", "GITHUB_RUN_ID=42", "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT="}

	r := p.mustRun(3, "deploy", "-e", "dev", "--yes")
	checkPrinted(t, "deploy's output", r.stdout+r.stderr)
	sum := string(p.readAbs(summary))
	checkPrinted(t, "the job summary", sum)
	want := `deployer unlock -s qs -e dev --force --lock-id 'x; touch PWNED #'`
	if !strings.Contains(r.stderr, want) || !strings.Contains(sum, want) {
		t.Errorf("the unlock command should quote the lock id (%s):\n%s\n--- summary\n%s", want, r, sum)
	}
	for _, args := range [][]string{{"state", "locks", "-e", "dev"}, {"state", "locks", "-e", "dev", "--json"}, {"unlock", "-e", "dev", "--force", "--yes"}} {
		r := p.run(args...)
		checkPrinted(t, strings.Join(args, " "), r.stdout+r.stderr)
	}

	// The suggested command, pasted into a shell, runs deployer unlock.
	line := want[len("deployer "):]
	paste := exec.Command("sh", "-c", fmt.Sprintf("%q %s --yes", bin, line))
	paste.Dir = p.dir
	out, _ := paste.CombinedOutput()
	if _, err := os.Stat(filepath.Join(p.dir, "PWNED")); err == nil {
		t.Errorf("pasting the unlock command ran a second command:\n%s", out)
	}
	if len(p.locks()) != 0 {
		t.Errorf("the pasted unlock command should break the lock:\n%s", out)
	}
}

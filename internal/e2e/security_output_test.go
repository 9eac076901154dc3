//go:build unix

package e2e

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// outputYAML: db fails printing its password (a value Markdown escaping
// changes), a mention and an image to stderr; noisy prints what tries to
// switch off or drive the GitHub runner's command processing, and its
// create command carries ##[ from deployer.yaml.
const outputYAML = `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  app:
    components:
      noisy:
        kind: Command
        config: {note: NOTE}
        command: {create: "sh noisy.sh # ##[stop-commands]cfg-token", delete: "true"}
      db:
        kind: Command
        depends_on: [noisy]
        config: {password: "${env:APP_PASSWORD}"}
        command: {create: "sh fail.sh", delete: "true"}
`

const (
	markupPassword = "Hunter_2024*x|y"
	noisyScript    = `cat > /dev/null
echo 'progress ##[stop-commands]TOKEN1'
printf '\302\240::warning::planted-nbsp\n'
printf '\343\200\200::warning::planted-ideographic\n'
printf '50%%\r::stop-commands::TOKEN2\n'
echo '::warning::planted-plain'
`
	failScript = `cat > /dev/null
echo "failing with $DEPLOYER_CONFIG_PASSWORD, ping @acme/admins ![x](https://evil.example/p.png) [ok](https://evil.example/ok)" >&2
exit 3
`
)

// ownCommand is a workflow command deployer writes itself: at the first
// column of a line of its own.
var ownCommand = regexp.MustCompile(`^::(add-mask|group|endgroup|error|warning|notice)( [^:]*)?::`)

// runnerCommands returns the lines of out the GitHub runner reads as
// workflow commands (lines split at \n and \r; "##[" anywhere; "::" first
// once every leading Unicode space is trimmed) that deployer did not write
// itself.
func runnerCommands(out string) []string {
	var planted []string
	for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		trimmed := strings.TrimLeftFunc(line, func(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' || r == '\u200b' })
		if strings.Contains(line, "##[") || (strings.HasPrefix(trimmed, "::") && (trimmed != line || !ownCommand.MatchString(line))) {
			planted = append(planted, line)
		}
	}
	return planted
}

// Under GitHub Actions a component's output and the progress lines that
// quote deployer.yaml write no workflow command the runner would read
// (none can stop command processing), every secret deployer knows is
// announced before the first component runs, and the job summary shows
// the failed component's error with its secret masked before escaping, no
// mention, no image, no link.
func TestComponentOutputCannotDriveTheRunner(t *testing.T) {
	p := newProject(t, strings.Replace(outputYAML, "NOTE", `"@acme/admins ![x](https://evil.example/q.png)"`, 1))
	p.write("noisy.sh", noisyScript)
	p.write("fail.sh", failScript)
	summary := t.TempDir() + "/summary.md"
	p.env = []string{"GITHUB_ACTIONS=true", "CI=true", "GITHUB_RUN_ID=42", "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT=",
		"APP_PASSWORD=" + markupPassword, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if planted := runnerCommands(r.stdout + r.stderr); len(planted) > 0 {
		t.Errorf("the runner would read these workflow commands from data: %q\n%s", planted, r)
	}
	announce, firstChild := strings.Index(r.stderr, "::add-mask::"+markupPassword+"\n"), strings.Index(r.stderr, "[app/")
	if announce < 0 || firstChild < 0 || announce > firstChild {
		t.Errorf("the password should be announced before the first component's output (at %d, first output at %d):\n%s", announce, firstChild, r)
	}
	sum := string(p.readAbs(summary))
	if i := strings.Index(sum, "Hunter"); i >= 0 {
		t.Errorf("the job summary shows the password: %q", sum[max(0, i-80):min(len(sum), i+40)])
	}
	if !strings.Contains(sum, `failing with \*\*\*`) {
		t.Errorf("the job summary should show the masked failure:\n%s", sum)
	}
	checkInert(t, "the job summary", sum)
}

// ownHTML is the HTML deployer writes itself in a comment.
var ownHTML = regexp.MustCompile(`</?(details|summary|br|code)>|<!-- deployer-plan [^>]*-->`)

// foreignHTML reports whether h holds a tag deployer does not write.
func foreignHTML(h string) bool { return strings.Contains(ownHTML.ReplaceAllString(h, ""), "<") }

// checkInert fails when md (GitHub Flavored Markdown) renders an image,
// a link or HTML that deployer does not write itself, or a mention.
func checkInert(t *testing.T, where, md string) {
	t.Helper()
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM))
	src := []byte(md)
	_ = ast.Walk(gm.Parser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image, *ast.Link:
			if label := string(nodeText(n, src)); label != "Workflow run" && label != "run's summary" {
				t.Errorf("%s renders a %s from data: %q", where, n.Kind(), label)
			}
		case *ast.RawHTML:
			if h := string(n.Segments.Value(src)); foreignHTML(h) {
				t.Errorf("%s renders HTML from data: %q", where, h)
			}
		case *ast.HTMLBlock:
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				if h := strings.TrimSpace(string(seg.Value(src))); foreignHTML(h) {
					t.Errorf("%s renders an HTML block from data: %q", where, h)
				}
			}
		}
		return ast.WalkContinue, nil
	})
	var b strings.Builder
	_ = gm.Convert(src, &b)
	rendered := html.UnescapeString(regexp.MustCompile(`<code>[^<]*</code>|<[^>]*>`).ReplaceAllString(b.String(), " "))
	if m := regexp.MustCompile(`(^|[^\w])@[A-Za-z0-9][\w/-]*`).FindString(rendered); m != "" {
		t.Errorf("%s mentions %q", where, m)
	}
}

// The marker that finds a stack's comment must start the comment: a
// comment that quotes it elsewhere (another stack's plan of a config that
// holds it) is not edited, and a config value holding a marker shows no
// "<!--" in the comment.
func TestCommentMarkerStartsTheBody(t *testing.T) {
	g := newFakeGitHub(t)
	const qsMarker = "<!-- deployer-plan stack=qs environment=dev -->"
	other := "<!-- deployer-plan stack=other environment=dev -->\n### deployer plan: other/dev\n\n| `o/c` | Command | + create | `note`: `\"" + qsMarker + "\"` |\n"
	g.comments = []ghComment{{ID: 1, Issue: 7, Body: other, User: ghUser{Login: "github-actions[bot]"}}}
	p := newProject(t, strings.Replace(outputYAML, "NOTE", `"<!-- deployer-plan stack=zz environment=dev -->"`, 1))
	p.env = append(prEnv(t, g), "APP_PASSWORD="+markupPassword, "DEPLOYER_SECRETS_PASSPHRASE="+passphrase, "PULUMI_CONFIG_PASSPHRASE=")
	p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode", "--github-comment")
	comments, _ := g.snapshot()
	if len(comments) != 2 || comments[0].Body != other {
		t.Fatalf("the plan should leave comment 1 alone and post its own, got %d comments: %+v", len(comments), comments)
	}
	body := comments[1].Body
	if !strings.HasPrefix(body, qsMarker+"\n") || strings.Count(body, "<!--") != 1 {
		t.Errorf("the comment should start with its marker and hold no other <!--:\n%s", body)
	}
	checkInert(t, "the comment", body)
}

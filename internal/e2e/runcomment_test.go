//go:build unix

package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// withSingleComments adds to g the two endpoints of one comment that a
// matrix run's section writes use (GET and DELETE
// /repos/acme/infra/issues/comments/ID); overwriteOnce, when set, is
// called under g.mu after the first update is stored: it stands for
// another job's write of the same moment.
func withSingleComments(g *fakeGitHub, overwriteOnce func(c *ghComment, before string)) {
	patched := false
	g.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		single := len(parts) == 6 && parts[3] == "issues" && parts[4] == "comments"
		if !single || (r.Method != http.MethodGet && r.Method != http.MethodDelete && r.Method != http.MethodPatch) {
			g.serve(w, r)
			return
		}
		id, _ := strconv.ParseInt(parts[5], 10, 64)
		g.mu.Lock()
		before := ""
		for _, c := range g.comments {
			if c.ID == id {
				before = c.Body
			}
		}
		g.mu.Unlock()
		if r.Method == http.MethodPatch {
			g.serve(w, r)
			g.mu.Lock()
			defer g.mu.Unlock()
			for i := range g.comments {
				if g.comments[i].ID == id && !patched && overwriteOnce != nil {
					patched = true
					overwriteOnce(&g.comments[i], before)
				}
			}
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.requests = append(g.requests, ghRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization")})
		for i, c := range g.comments {
			if c.ID != id {
				continue
			}
			if r.Method == http.MethodDelete {
				g.comments = append(g.comments[:i], g.comments[i+1:]...)
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(c)
			return
		}
		http.NotFound(w, r)
	})
}

// plan --github-comment --run-id (docs/many-stacks.md#pull-request-comment-of-a-matrix-run):
// five jobs of one matrix run, started at once, write one comment with a
// section per stack; the first update is overwritten by a write of the
// same moment that lacks it, and its job writes its section again. A
// later push's run gets a comment of its own; other comments stay, and
// so does one by another user that holds the run's marker.
func TestMatrixRunPlansShareOneComment(t *testing.T) {
	g := newFakeGitHub(t)
	forged := "<!-- deployer-plan run=99 environment=dev -->\n<!-- deployer-section network -->\nall clear\n<!-- /deployer-section network -->\n"
	g.comments = []ghComment{{ID: 1, Issue: 7, Body: "please look at the network change"},
		{ID: 2, Issue: 7, Body: forged, User: ghUser{Login: "mallory"}}}
	lost := ""
	withSingleComments(g, func(c *ghComment, before string) {
		lost = c.Body
		c.Body = before // the other job read before this write, and wrote after it
	})
	names := []string{"network", "database", "cache", "app", "monitoring"}
	stacks := map[string][]string{}
	for i, n := range names {
		stacks[n] = []string{`{size: ` + strconv.Itoa(i+1) + `}`}
	}
	p := stacksProject(t, stacks)
	p.env = append([]string{"PULUMI_CONFIG_PASSPHRASE=", "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase}, prEnv(t, g)...)

	jobs := map[string]*bgRun{}
	for _, n := range names {
		job := &project{t: t, dir: filepath.Join(p.dir, n), env: p.env}
		jobs[n] = job.start("plan", "-e", "dev", "--github-comment", "--run-id", "99")
	}
	for n, j := range jobs {
		res := j.wait(t, 5*time.Minute)
		if res.code != 0 || !strings.Contains(res.stderr, "the plan comment on pull request #7: https://github.com/acme/infra/pull/7#issuecomment-") {
			t.Errorf("%s: %s", n, res)
		}
	}
	comments, reqs := g.snapshot()
	if len(comments) != 3 || comments[0].Body != "please look at the network change" || comments[1].Body != forged {
		t.Fatalf("want the two other comments as they were and one comment of the run, got %d: %+v", len(comments), comments)
	}
	if lost == "" {
		t.Fatal("no update was overwritten: the test did not exercise the re-write")
	}
	body := comments[2].Body
	commentHas(t, "the run's comment", body, "<!-- deployer-plan run=99 environment=dev -->", "### deployer plan: run `99`, dev",
		"[Workflow run](https://github.com/acme/infra/actions/runs/99)")
	last := -1
	for _, n := range []string{"app", "cache", "database", "monitoring", "network"} { // sections in stack order
		open := "<!-- deployer-section " + n + " -->\n"
		if strings.Count(body, open) != 1 || strings.Count(body, "<!-- /deployer-section "+n+" -->\n") != 1 {
			t.Errorf("section %s is not there exactly once:\n%s", n, body)
			continue
		}
		i := strings.Index(body, open)
		if i < last {
			t.Errorf("section %s is out of order", n)
		}
		last = i
		section := body[i:strings.Index(body, "<!-- /deployer-section "+n)]
		commentHas(t, "section "+n, section, "<details><summary><code>"+n+"</code>: +1 ~0 ±0 -0</summary>", "| `s/c000` | Command | + create |")
	}
	for _, r := range reqs {
		if strings.Contains(r.Body, passphrase) {
			t.Errorf("a request holds the passphrase: %s %s", r.Method, r.Path)
		}
	}

	// The next push is another run: its own comment; run 99's stays.
	job := &project{t: t, dir: filepath.Join(p.dir, "cache"), env: append(p.env, "GITHUB_RUN_ID=100")}
	job.mustRun(0, "plan", "-e", "dev", "--github-comment", "--run-id", "100")
	comments, _ = g.snapshot()
	if len(comments) != 4 || comments[2].Body != body || !strings.Contains(comments[3].Body, "<!-- deployer-section cache -->") ||
		strings.Contains(comments[3].Body, "<!-- deployer-section app -->") {
		t.Errorf("run 100 should post a comment of its own with cache's section: %+v", comments)
	}
}

package webui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

const canary = "canary-Secr3t-9f27c1"

func maskCanary(s string) string { return strings.ReplaceAll(s, canary, "***") }

// The locks page shows, per lock, its scope, holder, host, whether the
// pid is alive (holder on this host), since, expiry, verdict, fence and
// the command that breaks it; then the waiters in queue order.
func TestLocksPageShowsEveryLockAndItsBreakCommand(t *testing.T) {
	b, m := fileLocks(t)
	host, _ := os.Hostname()
	now := time.Now()
	stack := hold(t, b, lockmgr.StackKey("payments", "prod"), "alice@"+host,
		lockmgr.Metadata{Hostname: host, PID: os.Getpid(), Operation: lockmgr.OpDeploy}, now)
	comp := hold(t, b, lockmgr.ComponentKey("shop", "dev", "api", "db"), "ci@runner-3",
		lockmgr.Metadata{Hostname: "runner-3", PID: 77, Operation: lockmgr.OpDeploy}, now.Add(-10*time.Minute))
	custom := hold(t, b, lockmgr.CustomKey("nightly-sync"), "cron@batch <script>alert(1)</script> "+canary,
		lockmgr.Metadata{Hostname: "batch", PID: 9, Operation: lockmgr.OpExec, Command: "sync --password " + canary}, now)
	if _, err := m.Enqueue(context.Background(), lockmgr.Request{Key: lockmgr.StackKey("payments", "prod"), LockedBy: "bob@laptop",
		Metadata: lockmgr.Metadata{Hostname: "laptop", PID: 555, Operation: lockmgr.OpDeploy}}); err != nil {
		t.Fatal(err)
	}
	ts, _ := serve(t, Config{Locks: []LockSource{lockSource(m)}, Mask: maskCanary, Ticker: make(manualTicker).ticker})
	code, body, hdr := get(t, ts, "/locks")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /locks = %d %s", code, hdr.Get("Content-Type"))
	}
	row := func(key string) string {
		re := regexp.MustCompile(`(?s)<tr class="lock [a-z]+" data-key="` + regexp.QuoteMeta(key) + `">.*?</tr>`)
		r := re.FindString(body)
		if r == "" {
			t.Fatalf("no row for %s in:\n%s", key, body)
		}
		return r
	}
	for key, wants := range map[string][]string{
		stack.LockKey: {"payments/prod", "alice@" + host, ">deploy<", fmt.Sprint(os.Getpid()), "(alive)", "ACTIVE",
			fmt.Sprintf("<td>%d</td>", stack.Fence), "deployer unlock -s payments -e prod --force --lock-id " + stack.LockID,
			time.Unix(stack.ExpiresAt, 0).UTC().Format("2006-01-02 15:04:05"), time.Unix(stack.LockedAt, 0).UTC().Format("2006-01-02 15:04:05") + " (1h0m"},
		comp.LockKey: {"shop/dev component api/db", "ci@runner-3", "runner-3", "STALE",
			"deployer unlock -s shop -e dev --component api/db --force --lock-id " + comp.LockID},
		custom.LockKey: {"custom nightly-sync", "deployer unlock --key nightly-sync --force --lock-id " + custom.LockID,
			"cron@batch &lt;script&gt;alert(1)&lt;/script&gt; ***"},
	} {
		r := row(key)
		for _, w := range wants {
			if !strings.Contains(r, w) {
				t.Errorf("row of %s lacks %q:\n%s", key, w, r)
			}
		}
	}
	if strings.Contains(row(comp.LockKey), "(alive)") || strings.Contains(row(comp.LockKey), "(not running)") {
		t.Errorf("a holder on another host has no pid verdict:\n%s", row(comp.LockKey))
	}
	waiter := regexp.MustCompile(`(?s)<tr class="waiter"[^>]*>.*?</tr>`).FindString(body)
	for _, w := range []string{"stack:payments:env:prod", "<td>1</td>", "bob@laptop", "laptop", "555"} {
		if !strings.Contains(waiter, w) {
			t.Errorf("waiter row lacks %q:\n%s", w, waiter)
		}
	}
	if strings.Contains(body, canary) || strings.Contains(body, "<script>alert") {
		t.Errorf("the page holds the canary secret or an unescaped script:\n%s", body)
	}
	if strings.Contains(body, "<script>") || !strings.Contains(body, `<script src="/assets/ui.js" defer></script>`) {
		t.Errorf("want only the same-origin script, no inline one")
	}
}

func TestLocksPageSaysWhenABackendFails(t *testing.T) {
	src := LockSource{Name: "dynamodb://locks", List: func(context.Context) (*stateops.LocksResult, error) {
		return nil, errors.New("AccessDeniedException: not allowed " + canary)
	}}
	ts, _ := serve(t, Config{Locks: []LockSource{src}, Mask: maskCanary, Ticker: make(manualTicker).ticker})
	_, body, _ := get(t, ts, "/locks")
	if !strings.Contains(body, "listing failed: AccessDeniedException: not allowed ***") || strings.Contains(body, canary) {
		t.Errorf("want the masked error:\n%s", body)
	}
}

// The stack/environment page: components with kind, status and outputs
// (secrets as (sensitive)), the history with who, commit, counts, outcome
// and a failed deployment's reason.
func TestEnvPageShowsComponentsAndHistory(t *testing.T) {
	at := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	st := &statestore.State{Serial: 7, Metadata: statestore.Metadata{Stack: "payments", Environment: "prod", LastUpdated: at, LastUpdatedBy: "alice"},
		Resources: map[string]*statestore.Resource{
			"api/db": {Kind: "Command", Status: statestore.ResourceReady, Lifecycle: statestore.Lifecycle{LastUpdated: at, Version: 3},
				Outputs: map[string]any{"host": "db.internal", "password": canary, "dsn": map[string]any{"secret": true, "value": canary}}},
		}}
	var gotStack, gotEnv string
	cfg := Config{Mask: maskCanary, Ticker: make(manualTicker).ticker,
		State: func(_ context.Context, stack, env string, _ int64) (*stateops.ShowStateResult, error) {
			gotStack, gotEnv = stack, env
			return &stateops.ShowStateResult{State: st}, nil
		},
		History: func(context.Context, string, string) (*stateops.HistoryResult, error) {
			return &stateops.HistoryResult{Entries: []stateops.HistoryEntry{
				{Serial: 7, Time: at, Type: "deploy", TriggeredBy: "alice", GitCommit: "0123456789abcdef", Status: statestore.DeploymentFailed,
					Duration: 12.5, Changed: &statestore.ResourcesChanged{Created: 1, Updated: 2}, Error: "api/db: exit status 1: token " + canary},
				{Serial: 6, Time: at.Add(-time.Hour), Type: "deploy", TriggeredBy: "bob", Status: statestore.DeploymentSuccess, Moved: []string{"a -> b"}},
			}}, nil
		}}
	ts, _ := serve(t, cfg)
	code, body, _ := get(t, ts, "/stacks/payments/prod")
	if code != 200 || gotStack != "payments" || gotEnv != "prod" {
		t.Fatalf("GET = %d for %s/%s", code, gotStack, gotEnv)
	}
	for _, w := range []string{"payments / prod", "Serial 7", "<td>api/db</td><td>Command</td><td>ready</td><td>3</td>",
		"<dt>host</dt><dd>db.internal</dd>", "<dt>password</dt><dd>(sensitive)</dd>", "<dt>dsn</dt><dd>(sensitive)</dd>",
		"<td>alice</td><td>0123456789ab</td><td>12.5s</td><td>&#43;1 ~2 -0</td>", "<td>failed</td>",
		"error: api/db: exit status 1: token ***", "moved a -&gt; b"} {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q:\n%s", w, body)
		}
	}
	if strings.Contains(body, canary) {
		t.Errorf("the page holds the canary secret:\n%s", body)
	}
	if code, body, _ := get(t, ts, "/stacks/payments/Prod%20x"); code != 400 || !strings.Contains(body, "environment") {
		t.Errorf("a bad environment name = %d:\n%s", code, body)
	}
}

// The stacks page: one node per stack and one edge per StackReference,
// layered (a stack right of every stack it reads), each node linking to
// its stack page.
func TestStacksPageDrawsTheGraph(t *testing.T) {
	r := newRepo(t)
	r.stack("net", "net")
	r.stack("db", "db", "net")
	r.stack("app", "app", "net", "db", "billing")
	ts, _ := serve(t, Config{Stacks: r.discover, Ticker: make(manualTicker).ticker})
	code, body, _ := get(t, ts, "/stacks")
	if code != 200 {
		t.Fatalf("GET /stacks = %d:\n%s", code, body)
	}
	nodes := regexp.MustCompile(`<g class="node( external)?" data-stack="([^"]+)">.*?<rect x="(\d+)"`).FindAllStringSubmatch(body, -1)
	x := map[string]string{}
	for _, n := range nodes {
		x[n[2]] = n[3]
	}
	if len(nodes) != 4 || x["net"] == "" || x["billing"] == "" {
		t.Fatalf("nodes %v, want net, db, app and the external billing", nodes)
	}
	if !(x["net"] < x["db"] && x["db"] < x["app"]) || len(x["app"]) < len(x["db"]) {
		t.Errorf("layers net %s, db %s, app %s: want net left of db left of app", x["net"], x["db"], x["app"])
	}
	edges := regexp.MustCompile(`<path class="edge" d="[^"]+" marker-end="url\(#arrow\)" data-from="(\w+)" data-to="(\w+)">`).FindAllStringSubmatch(body, -1)
	var got []string
	for _, e := range edges {
		got = append(got, e[1]+">"+e[2])
	}
	if strings.Join(got, " ") != "net>db net>app db>app billing>app" {
		t.Errorf("edges %v, want one per StackReference", got)
	}
	if !strings.Contains(body, `<a href="/stacks/app">`) || strings.Contains(body, `<a href="/stacks/billing">`) {
		t.Errorf("want links to the stacks of the repository only")
	}
	code, body, _ = get(t, ts, "/stacks/app")
	for _, w := range []string{`<a href="/stacks/app/dev">dev</a>`, `<a href="/stacks/app/prod">prod</a>`, "refc reads billing (external)"} {
		if code != 200 || !strings.Contains(body, w) {
			t.Errorf("GET /stacks/app = %d, lacks %q", code, w)
		}
	}
	if code, _, _ := get(t, ts, "/stacks/nope"); code != 404 {
		t.Errorf("GET /stacks/nope = %d, want 404", code)
	}
}

// Each node is coloured by the newest deployment of its environments:
// red when one did not succeed, green when all did, a dot per environment
// (one state read each).
func TestStacksPageColoursNodesByOutcome(t *testing.T) {
	r := newRepo(t)
	r.stack("net", "net")
	r.stack("db", "db", "net")
	r.stack("app", "app", "db")
	var mu sync.Mutex
	reads := map[string]int{}
	state := func(_ context.Context, stack, env string, _ int64) (*stateops.ShowStateResult, error) {
		mu.Lock()
		reads[stack+"/"+env]++
		mu.Unlock()
		status := statestore.DeploymentSuccess
		switch stack + "/" + env {
		case "db/prod":
			status = statestore.DeploymentFailed
		case "app/dev", "app/prod":
			return nil, errors.New("no state for app: deploy it first " + canary)
		}
		return &stateops.ShowStateResult{State: &statestore.State{DeploymentHistory: []statestore.Deployment{{Status: status}, {Status: statestore.DeploymentSuccess}}}}, nil
	}
	ts, _ := serve(t, Config{Stacks: r.discover, State: state, Mask: maskCanary, Ticker: make(manualTicker).ticker})
	_, body, _ := get(t, ts, "/stacks")
	for _, w := range []string{`<g class="node ok" data-stack="net">`, `<g class="node bad" data-stack="db">`, `<g class="node" data-stack="app">`,
		`data-env="prod"><title>prod: failed</title>`, `data-env="dev"><title>dev: success</title>`,
		`<title>dev: unknown (no state for app: deploy it first ***)</title>`} {
		if !strings.Contains(body, w) {
			t.Errorf("stacks page lacks %q", w)
		}
	}
	if len(reads) != 6 {
		t.Errorf("state reads %v, want one per stack and environment", reads)
	}
	for k, n := range reads {
		if n != 1 {
			t.Errorf("%s read %d times", k, n)
		}
	}
	if strings.Contains(body, canary) {
		t.Error("the page holds the canary")
	}
}

// A repository root without a deployer.yaml of its own has no lock
// backend: the locks page says so and how to name one.
func TestLocksPageWithoutALockBackendSaysWhatToDo(t *testing.T) {
	ts, _ := serve(t, Config{Ticker: make(manualTicker).ticker})
	if code, body, _ := get(t, ts, "/locks"); code != 200 || !strings.Contains(body, "name the backend with DEPLOYER_BACKEND_LOCK") {
		t.Errorf("GET /locks = %d:\n%s", code, body)
	}
}

package webui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// The page of one history record: the deployment that wrote it (who,
// commit, CI run, lock, policy overrides, the failure) and each component's
// field diffs from the serial before, secrets as (sensitive).
func TestRecordPageShowsTheDeploymentAndItsFieldDiffs(t *testing.T) {
	at := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	res := func(cfg, out map[string]any, status statestore.ResourceStatus) *statestore.Resource {
		return &statestore.Resource{Kind: "Command", Status: status, DesiredConfig: cfg, Outputs: out}
	}
	states := map[int64]*statestore.State{
		1: {Serial: 1, Resources: map[string]*statestore.Resource{
			"app/api":  res(map[string]any{"replicas": 2, "password": "old-" + canary}, map[string]any{"url": "http://a"}, statestore.ResourceReady),
			"app/old":  res(nil, nil, statestore.ResourceReady),
			"app/same": res(map[string]any{"x": 1}, nil, statestore.ResourceReady),
		}},
		2: {Serial: 2, Resources: map[string]*statestore.Resource{
			"app/api":  res(map[string]any{"replicas": 3, "password": canary}, map[string]any{"url": "http://b"}, statestore.ResourceFailed),
			"app/new":  res(map[string]any{"image": "web:2"}, nil, statestore.ResourceReady),
			"app/same": res(map[string]any{"x": 1}, nil, statestore.ResourceReady),
		}, DeploymentHistory: []statestore.Deployment{{DeploymentID: "dep-2", Type: "deploy", Timestamp: at, TriggeredBy: "alice", GitCommit: "abc123",
			Status: statestore.DeploymentFailed, DurationSeconds: 4.2, Serial: 2, Scope: "stack:payments:env:prod", RunID: "9911", RunAttempt: 2,
			Error: "app/api: exit status 3\nlast stderr lines:\n  quota exceeded " + canary, Deleted: []string{"app/old"},
			PolicyOverrides: []statestore.PolicyOverride{{Policy: "no-friday", Reason: "hotfix INC-7", By: "bob", Denies: []string{"deploys on Friday"}}}},
			{DeploymentID: "dep-1", Serial: 1, Status: statestore.DeploymentSuccess}}},
	}
	cfg := Config{Mask: maskCanary, Ticker: make(manualTicker).ticker,
		State: func(_ context.Context, _, _ string, serial int64) (*stateops.ShowStateResult, error) {
			st, ok := states[serial]
			if !ok {
				return nil, fmt.Errorf("no snapshot with serial %d", serial)
			}
			return &stateops.ShowStateResult{State: st}, nil
		}}
	ts, _ := serve(t, cfg)
	code, body, _ := get(t, ts, "/stacks/payments/prod/2")
	if code != 200 {
		t.Fatalf("GET = %d:\n%s", code, body)
	}
	squash := regexp.MustCompile(`\s*\n\s*`).ReplaceAllString(body, "")
	for _, w := range []string{"<th>Deployment</th><td>dep-2</td>", `<td class="outcome">failed</td>`, "<th>By</th><td>alice</td>",
		"<th>Commit</th><td>abc123</td>", "<th>CI run</th><td>9911 (attempt 2)</td>", "<th>Lock held</th><td>stack:payments:env:prod</td>",
		"<th>deleted</th><td>app/old</td>", "no-friday by bob: hotfix INC-7 (denies: deploys on Friday)",
		"app/api: exit status 3\nlast stderr lines:\n  quota exceeded ***",
		"<td>app/api (changed)</td><td>config.password</td><td>(sensitive)</td><td>(sensitive)</td>",
		"<td>config.replicas</td><td>2</td><td>3</td>", "<td>outputs.url</td><td>http://a</td><td>http://b</td>",
		"<td>status</td><td>ready</td><td>failed</td>", "<td>app/new (added)</td><td>config.image</td><td>-</td><td>web:2</td>",
		"<td>app/old (removed)</td>", "1 other component unchanged."} {
		if !strings.Contains(squash, strings.ReplaceAll(w, "\n", "")) && !strings.Contains(body, w) {
			t.Errorf("record page lacks %q", w)
		}
	}
	if strings.Contains(body, canary) || strings.Contains(body, "dep-1") {
		t.Errorf("the page holds the canary or another serial's record:\n%s", body)
	}
	if code, body, _ := get(t, ts, "/stacks/payments/prod/9"); code != 404 || !strings.Contains(body, "no snapshot with serial 9") {
		t.Errorf("a missing serial = %d:\n%s", code, body)
	}
	if code, _, _ := get(t, ts, "/stacks/payments/prod/x"); code != 400 {
		t.Errorf("serial x = %d, want 400", code)
	}
}

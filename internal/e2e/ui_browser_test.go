//go:build unix

package e2e

// deployer ui in a real browser (docs/ui.md): Debian's chromium driven by
// chromedp against the deployer binary, on the file backends and, when the
// test servers run, on S3 state with DynamoDB locks.

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// uiCanary is a secret output value no page may hold.
const uiCanary = "ui-canary-7c1f0e9a"

const uiShopYAML = `stack: shop
%BACKEND%environments: {dev: {}}
services:
  app:
    components:
      api:
        kind: Command
        config: {v: "%V%"}
        command:
          create: printf '{"url":"http://api.local","token":"` + uiCanary + `"}' > "$DEPLOYER_OUTPUTS"
          update: echo "disk full on api-host" >&2; exit 3
`

// chromium returns the browser of the test: DEPLOYER_TEST_CHROMIUM
// (scripts/test-servers/chromium.sh), else chromium on PATH; without one
// the test skips, or fails under CI=true.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(testenv.Chromium); p != "" {
		return p
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return testenv.Require(t, testenv.Chromium, "chromium")
}

// TestUIInABrowser: the locks page shows a lock exec lock and its waiter
// without a reload and drops them once released; the stack graph has one
// node per stack and one edge per StackReference; the failed deploy's
// reason is on the environment page; the canary secret is on no page; a
// foreign Host and a non-loopback bind without a token are refused.
// Screenshots of the three pages go to the test's temp dir (and to
// DEPLOYER_UI_SCREENSHOTS when set, for docs/ui.md).
func TestUIInABrowser(t *testing.T) {
	browser := chromium(t)
	for _, b := range promiseBackends {
		t.Run(b.name, func(t *testing.T) {
			r := newRemote(t, b.lock, b.state, "", true)
			uiInABrowser(t, browser, r.backendYAML("1m", "10s", "30s"), r.env)
		})
	}
}

func uiInABrowser(t *testing.T, browser, backend string, env []string) {
	yaml := strings.ReplaceAll(uiShopYAML, "%BACKEND%", backend)
	p := newProject(t, strings.ReplaceAll(yaml, "%V%", "1"))
	p.env = append(env, "DEPLOYER_SECRETS_PASSPHRASE=ui browser test")
	stack := func(dir, name string, refs ...string) {
		y := "stack: " + name + "\nenvironments: {dev: {}}\nservices:\n  app:\n    components:\n      run: {kind: Command, command: {create: \"true\"}}\n"
		for _, ref := range refs {
			y += "      " + ref + ": {kind: StackReference, config: {stack: " + ref + "}}\n"
		}
		p.write(filepath.Join(dir, "deployer.yaml"), y)
	}
	stack("stacks/net", "net")
	stack("stacks/db", "db", "net")
	stack("stacks/web", "web", "net", "db")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.ReplaceAll(yaml, "%V%", "2"))
	if r := p.run("deploy", "-e", "dev", "--yes"); r.code == 0 {
		t.Fatalf("the failing update deployed: %s", r)
	}

	// A non-loopback bind without a token does not start.
	if r := p.run("ui", "--addr", "0.0.0.0:0"); r.code != 2 || !strings.Contains(r.stderr, "DEPLOYER_UI_TOKEN") {
		t.Errorf("ui on 0.0.0.0 without a token: want exit 2 naming DEPLOYER_UI_TOKEN, got %s", r)
	}
	ui := p.start("ui", "--addr", "127.0.0.1:0", "--poll", "250ms")
	urlRE := regexp.MustCompile(`on (http://localhost:\d+/)`)
	eventually(t, 60*time.Second, "deployer ui to listen", func() bool { return urlRE.MatchString(ui.errb.String()) })
	base := urlRE.FindStringSubmatch(ui.errb.String())[1]

	shots := t.TempDir()
	if d := os.Getenv("DEPLOYER_UI_SCREENSHOTS"); d != "" {
		shots = d
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	// A hang guard for the whole browser session, not a measure of speed.
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel chromedp.CSS) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return v
	}
	eval := func(expr string) int {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[int](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	noCanary := func(page string) {
		t.Helper()
		html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
		if err != nil {
			t.Fatalf("read %s: %v", page, err)
		}
		if strings.Contains(html, uiCanary) {
			t.Errorf("%s holds the canary secret", page)
		}
	}

	// The locks page, opened before the lock is taken; the marker set in
	// the page survives only if the page is never reloaded.
	const row, waiter chromedp.CSS = `tr.lock[data-key="custom:ui-e2e"]`, `tr.waiter[data-key="custom:ui-e2e"]`
	do("open the locks page", chromedp.Navigate(base+"locks"), chromedp.WaitVisible(chromedp.CSS("#locks .stamp")))
	eval(`window.deployerNoReload = 7`)
	fifo := filepath.Join(p.dir, "release")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	holder := p.start("lock", "exec", "--key", "ui-e2e", "--", "sh", "-c", "cat release >/dev/null")
	do("the lock appears", chromedp.WaitVisible(row))
	second := p.start("lock", "exec", "--key", "ui-e2e", "--lock-timeout", "5m", "--", "true")
	do("the waiter appears", chromedp.WaitVisible(waiter))
	rowText, waiterText := text(row), text(waiter)
	if m := eval(`window.deployerNoReload || 0`); m != 7 {
		t.Errorf("the locks page was reloaded (marker %d)", m)
	}
	for _, w := range []string{"custom ui-e2e", "exec", "ACTIVE", "(alive)", "deployer unlock --key ui-e2e --force --lock-id "} {
		if !strings.Contains(rowText, w) {
			t.Errorf("lock row lacks %q: %s", w, rowText)
		}
	}
	if f := strings.Fields(waiterText); len(f) < 2 || f[1] != "1" {
		t.Errorf("waiter row %q, want position 1", waiterText)
	}
	shot("ui-locks.png")
	noCanary("the locks page")
	// Release: the holder's command ends, the waiter takes the lock, runs
	// and releases it; the page drops both rows.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if r := holder.wait(t, 60*time.Second); r.code != 0 {
		t.Fatalf("holder: %s", r)
	}
	if r := second.wait(t, 60*time.Second); r.code != 0 {
		t.Fatalf("second lock exec: %s", r)
	}
	do("the lock goes away", chromedp.WaitNotPresent(row), chromedp.WaitNotPresent(waiter))
	if m := eval(`window.deployerNoReload || 0`); m != 7 {
		t.Errorf("the locks page was reloaded (marker %d)", m)
	}

	// The stack graph: 4 stacks, 3 StackReferences.
	do("open the stacks page", chromedp.Navigate(base+"stacks"), chromedp.WaitVisible(chromedp.CSS("#stack-graph")))
	nodes := eval(`document.querySelectorAll("#stack-graph g.node").length`)
	edges := eval(`document.querySelectorAll("#stack-graph path.edge").length`)
	if nodes != 4 || edges != 3 {
		t.Errorf("graph: %d nodes, %d edges; want 4 stacks and 3 StackReferences", nodes, edges)
	}
	if n := eval(`document.querySelectorAll('#stack-graph g.node.bad[data-stack="shop"]').length`); n != 1 {
		t.Errorf("shop's node is not red after its failed deploy")
	}
	shot("ui-stacks.png")
	noCanary("the stacks page")

	// The environment page: the component, its secret output, the failure.
	do("open shop/dev", chromedp.Navigate(base+"stacks/shop/dev"), chromedp.WaitVisible(chromedp.CSS("table.history")))
	body := text("main")
	for _, w := range []string{"app/api", "(sensitive)", "http://api.local", "failed", "disk full on api-host"} {
		if !strings.Contains(body, w) {
			t.Errorf("shop/dev page lacks %q:\n%s", w, body)
		}
	}
	shot("ui-env.png")
	noCanary("the shop/dev page")
	// Its failed record, one click away.
	do("open serial 2", chromedp.Click(chromedp.CSS(`a[href="/stacks/shop/dev/2"]`)), chromedp.WaitVisible(chromedp.CSS("table.record")))
	body = text("main")
	for _, w := range []string{"failed", "disk full on api-host", "app/api (changed)", "status"} {
		if !strings.Contains(body, w) {
			t.Errorf("serial 2 page lacks %q:\n%s", w, body)
		}
	}
	noCanary("the serial 2 page")

	// A foreign Host header is refused (DNS-rebinding defence).
	req, _ := http.NewRequest("GET", base+"locks", nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d %s, want 421", resp.StatusCode, msg)
	}
	_ = syscall.Kill(ui.cmd.Process.Pid, syscall.SIGINT)
	if r := ui.wait(t, 60*time.Second); r.code != 0 {
		t.Errorf("deployer ui after Ctrl-C: %s", r)
	}
	t.Logf("screenshots in %s", shots)
}

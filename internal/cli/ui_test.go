package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdUI(t *testing.T) {
	const tok = "0123456789abcdef-tok"
	tests := []struct {
		name    string
		env     string
		argv    []string
		want    UIOptions
		wantErr string
	}{
		{name: "loopback by default", want: UIOptions{Addr: "127.0.0.1:8787", Poll: time.Second}},
		{name: "flags", argv: []string{"--addr", "127.0.0.1:0", "--poll", "2s", "--allow-host", "ops"},
			want: UIOptions{Addr: "127.0.0.1:0", Poll: 2 * time.Second, AllowHosts: []string{"ops"}}},
		{name: "token from the environment", env: tok, argv: []string{"--addr", "0.0.0.0:8787"},
			want: UIOptions{Addr: "0.0.0.0:8787", Poll: time.Second, Token: tok}},
		{name: "flag over environment", env: "ignored-ignored-ignored", argv: []string{"--token", tok},
			want: UIOptions{Addr: "127.0.0.1:8787", Poll: time.Second, Token: tok}},
		{name: "beyond loopback without a token", argv: []string{"--addr", "0.0.0.0:8787"}, wantErr: "set a token with --token or DEPLOYER_UI_TOKEN"},
		{name: "a short token", argv: []string{"--addr", "10.0.0.1:8787", "--token", "abc"}, wantErr: "use at least 16"},
		{name: "too fast a poll", argv: []string{"--poll", "10ms"}, wantErr: "want at least 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DEPLOYER_UI_TOKEN", tt.env)
			got, _, err := parseCmd(t, false, NewCmdUI, tt.argv...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Addr != tt.want.Addr || got.Poll != tt.want.Poll || got.Token != tt.want.Token || strings.Join(got.AllowHosts, ",") != strings.Join(tt.want.AllowHosts, ",") {
				t.Errorf("options %+v, want %+v", got, tt.want)
			}
		})
	}
}

// deployer ui over a deployed project on the file backends: the locks
// page lists the held lock with its unlock command, the environment page
// the component and the deploy, the stacks page the stack, and a foreign
// Host is refused.
func TestUIServesTheProjectOnFileBackends(t *testing.T) {
	cfg := shopProject(t)
	t.Chdir(filepath.Dir(cfg))
	if _, stderr, err := runRoot(t, "", false, "--config", cfg, "deploy", "-e", "dev", "--yes"); err != nil {
		t.Fatalf("deploy: %v\n%s", err, stderr)
	}
	b, err := filelock.New(filepath.Join(filepath.Dir(cfg), ".deployer"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := time.Now()
	rec, err := b.TryAcquire(context.Background(), lockmgr.Record{LockKey: lockmgr.StackKey("shop", "dev"), LockID: "11111111-2222-3333-4444-555555555555",
		LockedBy: "ci@runner", LockedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix(),
		Metadata: lockmgr.Metadata{PID: 4242, Hostname: "runner", Operation: lockmgr.OpDeploy}})
	if err != nil {
		t.Fatal(err)
	}

	streams, _, errOut := termui.Test("")
	f := app.NewFactory(streams)
	f.ConfigPath = cfg
	defer f.Close()
	urls := make(chan string, 1)
	cmd := NewCmdUI(f, func(ctx context.Context, o *UIOptions) error {
		o.Ready = func(u string) { urls <- u }
		return runUI(ctx, o)
	})
	cmd.SetArgs([]string{"--addr", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("deployer ui ended: %v\n%s", err, errOut)
	}
	get := func(path, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url+strings.TrimPrefix(path, "/"), nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if !strings.HasPrefix(url, "http://localhost:") {
		t.Errorf("URL %s, want http://localhost:PORT/", url)
	}
	code, body := get("/locks", "")
	for _, w := range []string{"ci@runner", "shop/dev", "deployer unlock -s shop -e dev --force --lock-id " + rec.LockID, "ACTIVE"} {
		if code != 200 || !strings.Contains(body, w) {
			t.Errorf("GET /locks = %d, lacks %q", code, w)
		}
	}
	code, body = get("/stacks/shop/dev", "")
	for _, w := range []string{"app/api", "Command", "ready", "<td>deploy</td><td>success</td>"} {
		if code != 200 || !strings.Contains(body, w) {
			t.Errorf("GET /stacks/shop/dev = %d, lacks %q:\n%s", code, w, body)
		}
	}
	if code, body = get("/stacks", ""); code != 200 || !strings.Contains(body, `data-stack="shop"`) {
		t.Errorf("GET /stacks = %d:\n%s", code, body)
	}
	if code, _ = get("/locks", "evil.example"); code != http.StatusMisdirectedRequest {
		t.Errorf("a foreign Host = %d, want 421", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("deployer ui after Ctrl-C: %v", err)
	}
	if !strings.Contains(errOut.String(), "deployer ui (read-only) on "+url) {
		t.Errorf("stderr %q, want the URL", errOut)
	}
}

package webui

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/stacks"
)

// countingBackend is a real lock backend that counts its List calls.
type countingBackend struct {
	lockmgr.Backend
	lists atomic.Int64
}

func (c *countingBackend) List(ctx context.Context, prefix string) ([]lockmgr.Record, error) {
	c.lists.Add(1)
	return c.Backend.List(ctx, prefix)
}

// fileLocks is a file lock backend in a temp dir, counted, with its
// Manager at the system clock.
func fileLocks(t *testing.T) (*countingBackend, *lockmgr.Manager) {
	t.Helper()
	b, err := file.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	cb := &countingBackend{Backend: b}
	return cb, lockmgr.NewManager(cb, lockmgr.Options{})
}

func lockSource(m *lockmgr.Manager) LockSource {
	l := stateops.NewLocking(stateops.LockDeps{Locks: m})
	return LockSource{Name: "file://locks", List: func(ctx context.Context) (*stateops.LocksResult, error) {
		return l.Locks(ctx, stateops.LocksRequest{})
	}}
}

// hold writes a lock record for key straight to the backend, as a holder
// on another machine would, and returns it with its fence.
func hold(t *testing.T, b lockmgr.Backend, key, by string, md lockmgr.Metadata, heartbeat time.Time) lockmgr.Record {
	t.Helper()
	now := time.Now()
	rec, err := b.TryAcquire(context.Background(), lockmgr.Record{LockKey: key, LockID: "id-" + strings.ReplaceAll(key, ":", "-"),
		LockedBy: by, LockedAt: now.Add(-time.Hour).Unix(), LastHeartbeat: heartbeat.Unix(), ExpiresAt: now.Add(time.Hour).Unix(), Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// manualTicker is a Ticker the test drives: each send is one tick.
type manualTicker chan time.Time

func (m manualTicker) ticker(time.Duration) (<-chan time.Time, func()) { return m, func() {} }

// serve starts the Server of cfg on a loopback httptest server and its
// poller, both stopped at the end of the test.
func serve(t *testing.T, cfg Config) (*httptest.Server, *Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	if cfg.Poll == 0 {
		cfg.Poll = time.Second
	}
	srv, err := New(cfg, ts.Listener.Addr())
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; ts.Close() })
	return ts, srv
}

func get(t *testing.T, ts *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := ts.Client().Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), resp.Header
}

// repo writes stacks under a temp root: name reads refs.
type repo struct {
	t    testing.TB
	root string
}

func newRepo(t testing.TB) *repo {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &repo{t: t, root: root}
}

func (r *repo) stack(dir, name string, refs ...string) {
	r.t.Helper()
	y := "stack: " + name + "\nenvironments:\n  dev: {}\n  prod: {}\nservices:\n  app:\n    components:\n      run:\n        kind: Command\n        command: {create: \"true\"}\n"
	for i, ref := range refs {
		y += "      ref" + string(rune('a'+i)) + ":\n        kind: StackReference\n        config: {stack: " + ref + "}\n"
	}
	p := filepath.Join(r.root, dir, stacks.ConfigFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) discover() (*stacks.Set, error) {
	return stacks.Discover(r.root, stacks.Options{Load: func(p string) (*config.Config, error) { return config.Load(p) }})
}

var loopback = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8787}

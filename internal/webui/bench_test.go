package webui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/stacks"
)

// benchServer is a Server on loopback whose poller already holds snap.
func benchServer(b *testing.B, cfg Config, snap *Snapshot) *Server {
	b.Helper()
	cfg.Poll, cfg.Ticker = time.Hour, make(manualTicker).ticker
	srv, err := New(cfg, loopback)
	if err != nil {
		b.Fatal(err)
	}
	if snap != nil {
		srv.poller.last = snap
	}
	return srv
}

func benchGet(b *testing.B, h http.Handler, path, want string) {
	b.Helper()
	r := httptest.NewRequest("GET", path, nil)
	r.Host = "localhost:8787"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), want) {
		b.Fatalf("GET %s = %d, lacks %q", path, w.Code, want)
	}
	b.SetBytes(int64(w.Body.Len()))
}

// BenchmarkLocksPage1000 renders the locks page of 1,000 held locks and
// 100 waiters (docs/ui.md#speed: under 200 ms).
func BenchmarkLocksPage1000(b *testing.B) {
	now := time.Now()
	res := &stateops.LocksResult{}
	for i := range 1000 {
		rec := lockmgr.Record{LockKey: lockmgr.StackKey(fmt.Sprintf("stack-%04d", i), "prod"), LockID: fmt.Sprintf("550e8400-e29b-41d4-a716-%012d", i),
			LockedBy: "ci@runner-" + fmt.Sprint(i%17), LockedAt: now.Add(-time.Hour).Unix(), LastHeartbeat: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix(),
			Fence: int64(i + 1), Metadata: lockmgr.Metadata{Hostname: "runner", PID: 1000 + i, Operation: lockmgr.OpDeploy}}
		res.Locks = append(res.Locks, lockmgr.Status{Record: rec, Verdict: lockmgr.Active, Level: lockmgr.LevelStack, Age: time.Hour})
	}
	for i := range 100 {
		res.Waiters = append(res.Waiters, lockmgr.Waiter{Status: lockmgr.Status{Record: lockmgr.Record{LockedBy: "dev@laptop"}}, Key: res.Locks[i].LockKey, Position: 1})
	}
	snap := &Snapshot{Seq: 1, At: now.Add(time.Hour), Listings: []Listing{{Source: "dynamodb://locks", Result: res}}}
	srv := benchServer(b, Config{Locks: []LockSource{{Name: "dynamodb://locks"}}}, snap)
	b.ReportAllocs()
	for b.Loop() {
		benchGet(b, srv, "/locks", "stack-0999")
	}
}

// BenchmarkStackGraph200 renders the stacks page of 200 stacks in 20
// layers, each reading up to three stacks of the layer before
// (docs/ui.md#speed: under 200 ms). Discovery is done once, before.
func BenchmarkStackGraph200(b *testing.B) {
	r := newRepo(b)
	for i := range 200 {
		var refs []string
		if layer := i / 10; layer > 0 {
			for k := range 3 {
				refs = append(refs, fmt.Sprintf("s%03d", (layer-1)*10+(i+k)%10))
			}
		}
		r.stack(fmt.Sprintf("s%03d", i), fmt.Sprintf("s%03d", i), refs...)
	}
	set, err := r.discover()
	if err != nil {
		b.Fatal(err)
	}
	srv := benchServer(b, Config{Stacks: func() (*stacks.Set, error) { return set, nil }}, nil)
	b.ReportAllocs()
	for b.Loop() {
		benchGet(b, srv, "/stacks", `data-stack="s199"`)
	}
}

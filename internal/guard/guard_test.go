package guard_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/backends"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/guard"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// lockBackends are the lock backends every guard flow runs on: the file
// backend, and Redis from scripts/test-servers/selfhosted.sh.
func lockBackends(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"file": func(t *testing.T) string { return "file://" + t.TempDir() },
		"redis": func(t *testing.T) string {
			u := testenv.Require(t, testenv.RedisURL, "Redis")
			var b [4]byte
			_, _ = rand.Read(b[:])
			return u + "?key_prefix=deployer-guard-test-" + hex.EncodeToString(b[:])
		},
	}
}

// app is a sharer's status server on loopback whose answer can be switched.
type app struct {
	srv  *httptest.Server
	code atomic.Int32
	hits atomic.Int32
}

func newApp(t *testing.T) *app {
	a := &app{}
	a.code.Store(http.StatusOK)
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.hits.Add(1)
		if r.Method != http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.WriteHeader(int(a.code.Load()))
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// stalled accepts connections and never answers.
func stalled(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

// rig is a project directory with a shared resource, its stop command
// (which records each run and any overlap) and a lock backend.
type rig struct {
	t       *testing.T
	dir     string
	lockURL string
	cfg     *config.Config
	audit   *bytes.Buffer
	auditW  *syncWriter // the one writer of audit, shared by every guard of the rig
	opened  atomic.Int32
}

// stopScript counts runs in stops.log and overlaps in overlaps.log.
const stopScript = `mkdir .running 2>/dev/null || echo overlap >> overlaps.log
echo "$DEPLOYER_GUARD_AS" >> stops.log
sleep 0.2
rmdir .running
`

func newRig(t *testing.T, lockURL string, urls map[string]string, statusTimeout time.Duration) *rig {
	r := &rig{t: t, dir: t.TempDir(), lockURL: lockURL, audit: &bytes.Buffer{}}
	r.auditW = &syncWriter{w: r.audit}
	if err := os.WriteFile(filepath.Join(r.dir, "stop.sh"), []byte(stopScript), 0o755); err != nil {
		t.Fatal(err)
	}
	sharers := map[string]*config.Sharer{}
	for app, u := range urls {
		sharers[app] = &config.Sharer{StatusURL: u}
	}
	r.cfg = &config.Config{Dir: r.dir, Path: filepath.Join(r.dir, "deployer.yaml"), Shared: map[string]*config.Shared{
		"db": {Stop: "sh ./stop.sh", LockTTL: 5 * time.Second, MaxRetries: 3, StatusTimeout: statusTimeout, Sharers: sharers},
	}}
	return r
}

func (r *rig) guard() *guard.Guard {
	return guard.New(guard.Deps{
		Locks: func(ctx context.Context, cfg *config.Config) (*lockmgr.Manager, error) {
			r.opened.Add(1)
			return r.manager(cfg.Backend.LockTTL), nil
		},
		Dir:    r.dir,
		Audit:  slog.New(slog.NewJSONHandler(r.auditW, nil)),
		Getenv: os.Getenv,
		Grace:  time.Second,
	})
}

func (r *rig) manager(ttl time.Duration) *lockmgr.Manager {
	b, err := backends.OpenLock(context.Background(), r.lockURL, backends.Options{BaseDir: r.dir})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { b.Close() })
	return lockmgr.NewManager(b, lockmgr.Options{TTL: ttl, HeartbeatInterval: ttl / 3, StaleAfter: ttl, MaxRetryInterval: 50 * time.Millisecond})
}

func (r *rig) lines(name string) []string {
	data, err := os.ReadFile(filepath.Join(r.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return strings.Fields(string(data))
}

func (r *rig) stop(as string) *guard.Result {
	r.t.Helper()
	res, err := r.guard().Stop(context.Background(), r.cfg, "db", as, false)
	if err != nil {
		r.t.Fatalf("guard stop db --as %s: %v", as, err)
	}
	return res
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

func statuses(res *guard.Result) string {
	var parts []string
	for _, s := range res.Sharers {
		parts = append(parts, s.App+"="+string(s.Status))
	}
	return strings.Join(parts, ",")
}

func TestThreeAppsStopTheDatabaseOnlyWithTheLast(t *testing.T) {
	for name, url := range lockBackends(t) {
		t.Run(name, func(t *testing.T) {
			a, b, c := newApp(t), newApp(t), newApp(t)
			r := newRig(t, url(t), map[string]string{"a": a.srv.URL, "b": b.srv.URL, "c": c.srv.URL}, 2*time.Second)

			a.code.Store(http.StatusServiceUnavailable) // a is being stopped
			res := r.stop("a")
			if res.Decision != guard.SkippedSharedActive || statuses(res) != "b=UP,c=UP" || !res.Lock.Released || res.Stop != nil {
				t.Fatalf("all UP: %+v %s", res, statuses(res))
			}
			if *res.Sharers[0].HTTPCode != 200 || res.Sharers[0].Timestamp.IsZero() {
				t.Fatalf("quick status record: %+v", res.Sharers[0])
			}
			b.srv.Close()
			res = r.stop("b")
			if res.Decision != guard.SkippedSharedActive || statuses(res) != "a=DOWN,c=UP" {
				t.Fatalf("c UP: %+v %s", res, statuses(res))
			}
			c.srv.Close()
			res = r.stop("c")
			// b's server is gone: a refused connection is UNKNOWN, which counts
			// as UP. Bring b back as DOWN (503), as a stopped app answers.
			if res.Decision != guard.SkippedSharedActive || statuses(res) != "a=DOWN,b=UNKNOWN" || res.Sharers[1].HTTPCode != nil {
				t.Fatalf("b refused: %+v %s", res, statuses(res))
			}
			b2 := newApp(t)
			b2.code.Store(http.StatusServiceUnavailable)
			r.cfg.Shared["db"].Sharers["b"].StatusURL = b2.srv.URL
			res = r.stop("c")
			if res.Decision != guard.Stopped || statuses(res) != "a=DOWN,b=DOWN" || res.Stop == nil || res.Stop.ExitCode != 0 {
				t.Fatalf("all DOWN: %+v %s", res, statuses(res))
			}
			if got := r.lines("stops.log"); len(got) != 1 || got[0] != "c" {
				t.Fatalf("the stop ran %v, want once, as c", got)
			}
			// The lock is kept until its TTL: a second stop right after skips.
			if res.Lock.Released || res.Lock.KeptUntil == nil {
				t.Fatalf("after a stop the lock is kept: %+v", res.Lock)
			}
			again := r.stop("a")
			if again.Decision != guard.SkippedLock || again.Lock.Retries != 3 || again.Lock.Holder == nil || again.Lock.Holder.LockID != res.Lock.LockID {
				t.Fatalf("a stop right after a stop: %+v", again.Lock)
			}
			if len(r.lines("stops.log")) != 1 {
				t.Fatal("the stop ran twice")
			}
			for _, want := range []string{`"msg":"guard.decision"`, `"decision":"stopped"`, `"deployer.guard.stop.stopped":1`, `"decision":"skipped_lock"`, `"deployer.guard.lock.acquire.retries":3`} {
				if !strings.Contains(r.auditW.String(), want) {
					t.Errorf("audit log lacks %s:\n%s", want, r.auditW)
				}
			}
		})
	}
}

func TestStatusCodesStallsAndRefusals(t *testing.T) {
	down, up := newApp(t), newApp(t)
	down.code.Store(http.StatusServiceUnavailable)
	redirect := newApp(t)
	redirect.code.Store(http.StatusFound)
	timeout := 300 * time.Millisecond
	r := newRig(t, "file://"+t.TempDir(), map[string]string{
		"me": up.srv.URL, "down": down.srv.URL, "moved": redirect.srv.URL,
		"stalled": stalled(t), "refused": "http://" + testenv.ClosedAddr(t) + "/",
	}, timeout)
	res := r.stop("me")
	if res.Decision != guard.SkippedSharedActive || statuses(res) != "down=DOWN,moved=UNKNOWN,refused=UNKNOWN,stalled=UNKNOWN" {
		t.Fatalf("%+v %s", res, statuses(res))
	}
	st := res.Sharers[3]
	if st.HTTPCode != nil || st.Error != fmt.Sprintf("no answer within %s", timeout) {
		t.Fatalf("stalled: %+v", st)
	}
	if got := res.Sharers[1]; *got.HTTPCode != 302 {
		t.Fatalf("a redirect is not followed: %+v", got)
	}
	if up.hits.Load() != 0 {
		t.Fatal("the app being stopped was checked")
	}
	if len(r.lines("stops.log")) != 0 {
		t.Fatal("the stop ran")
	}
	all, err := r.guard().Status(context.Background(), r.cfg, "db")
	if err != nil || len(all) != 5 || all[1].App != "me" || all[1].Status != guard.Up {
		t.Fatalf("status: %+v, %v", all, err)
	}
}

func TestRacingStopsRunTheStopAtMostOnce(t *testing.T) {
	for name, url := range lockBackends(t) {
		t.Run(name, func(t *testing.T) {
			urls := map[string]string{}
			for _, n := range []string{"a", "b", "c"} {
				s := newApp(t)
				s.code.Store(http.StatusServiceUnavailable)
				urls[n] = s.srv.URL
			}
			r := newRig(t, url(t), urls, 2*time.Second)
			for round := 0; round < 3; round++ {
				os.Remove(filepath.Join(r.dir, "stops.log"))
				var wg sync.WaitGroup
				results := make([]*guard.Result, 2)
				for i, as := range []string{"a", "b"} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := r.guard().Stop(context.Background(), r.cfg, "db", as, false)
						if err != nil {
							t.Errorf("guard stop --as %s: %v", as, err)
							return
						}
						results[i] = res
					}()
				}
				wg.Wait()
				if t.Failed() {
					return
				}
				decisions := []guard.Decision{results[0].Decision, results[1].Decision}
				stops := r.lines("stops.log")
				// The first round stops; later rounds find the kept lock.
				if round == 0 && len(stops) != 1 {
					t.Fatalf("round %d: the stop ran %d times (%v), decisions %v", round, len(stops), stops, decisions)
				}
				if len(stops) > 1 || len(r.lines("overlaps.log")) != 0 {
					t.Fatalf("round %d: the stop ran %v, overlaps %v", round, stops, r.lines("overlaps.log"))
				}
				nStopped := 0
				for _, d := range decisions {
					switch d {
					case guard.Stopped:
						nStopped++
					case guard.SkippedLock:
					default:
						t.Fatalf("round %d: decision %s", round, d)
					}
				}
				if nStopped != len(stops) {
					t.Fatalf("round %d: %d stopped decisions, %d stops", round, nStopped, len(stops))
				}
			}
		})
	}
}

func TestLockHeldElsewhereSkipsFailSafe(t *testing.T) {
	for name, url := range lockBackends(t) {
		t.Run(name, func(t *testing.T) {
			a, b := newApp(t), newApp(t)
			b.code.Store(http.StatusServiceUnavailable)
			r := newRig(t, url(t), map[string]string{"a": a.srv.URL, "b": b.srv.URL}, time.Second)
			other, err := r.manager(time.Minute).Acquire(context.Background(), lockmgr.Request{Key: guard.LockKey("db"), LockedBy: "ops@bastion", Metadata: lockmgr.Metadata{Operation: "exec"}})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Release(context.Background())
			res := r.stop("a")
			if res.Decision != guard.SkippedLock || res.Lock.Acquired || res.Lock.Retries != 3 || res.Lock.Holder.LockedBy != "ops@bastion" || len(res.Sharers) != 0 {
				t.Fatalf("%+v %+v", res, res.Lock)
			}
			if b.hits.Load() != 0 || len(r.lines("stops.log")) != 0 {
				t.Fatal("checked or stopped without the lock")
			}
			dry, err := r.guard().Stop(context.Background(), r.cfg, "db", "a", true)
			if err != nil || dry.Decision != guard.SkippedLock || !dry.DryRun {
				t.Fatalf("dry run: %+v, %v", dry, err)
			}
		})
	}
}

func TestDedicatedStopsAtOnceWithoutALock(t *testing.T) {
	a := newApp(t)
	r := newRig(t, "file://"+t.TempDir(), map[string]string{"only": a.srv.URL}, time.Second)
	res := r.stop("only")
	if res.Decision != guard.DedicatedStopped || res.Lock != nil || len(res.Sharers) != 0 || r.opened.Load() != 0 || a.hits.Load() != 0 {
		t.Fatalf("%+v, lock backend opened %d times", res, r.opened.Load())
	}
	if len(r.lines("stops.log")) != 1 {
		t.Fatal("the stop did not run once")
	}
}

func TestCancelDuringChecksNeverStopsAndReleases(t *testing.T) {
	r := newRig(t, "file://"+t.TempDir(), map[string]string{"a": "http://127.0.0.1:1/", "slow": stalled(t)}, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	g := r.guard()
	var log syncWriter
	log.w = &bytes.Buffer{}
	g.Log = &log
	done := make(chan error, 1)
	go func() {
		_, err := g.Stop(ctx, r.cfg, "db", "a", false)
		done <- err
	}()
	// Cancel once the lock is taken (the checks are then under way).
	for !strings.Contains(func() string { log.mu.Lock(); defer log.mu.Unlock(); return log.w.String() }(), "acquired") {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if len(r.lines("stops.log")) != 0 {
		t.Fatal("the stop ran after Ctrl-C")
	}
	if _, err := r.manager(time.Minute).Backend().Get(context.Background(), guard.LockKey("db")); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Fatalf("the lock was not released: %v", err)
	}
}

func TestFailingStopReportsAndReleases(t *testing.T) {
	down := newApp(t)
	down.code.Store(http.StatusServiceUnavailable)
	r := newRig(t, "file://"+t.TempDir(), map[string]string{"a": down.srv.URL, "b": down.srv.URL}, time.Second)
	r.cfg.Shared["db"].Stop = "echo cannot reach the database >&2; exit 7"
	res, err := r.guard().Stop(context.Background(), r.cfg, "db", "a", false)
	var se *guard.StopError
	if !errors.As(err, &se) || se.Run.ExitCode != 7 || !strings.Contains(err.Error(), "cannot reach the database") || res.Decision != guard.Stopped || !res.Lock.Released {
		t.Fatalf("%v / %+v", err, res)
	}
	if _, err := r.guard().Stop(context.Background(), r.cfg, "db", "nobody", false); err == nil || !strings.Contains(err.Error(), `"nobody" is not a sharer of db (sharers: a, b)`) {
		t.Fatalf("unknown app: %v", err)
	}
	if _, err := r.guard().Stop(context.Background(), r.cfg, "dbb", "a", false); err == nil || !strings.Contains(err.Error(), `"dbb" is not a shared resource`) {
		t.Fatalf("unknown resource: %v", err)
	}
}

func TestLeaseConfigFitsTheGuardTTL(t *testing.T) {
	cfg := &config.Config{Backend: config.Backend{LockTTL: 5 * time.Minute, HeartbeatInterval: time.Minute, StaleAfter: 2 * time.Minute}}
	for ttl, want := range map[time.Duration]config.Backend{
		// short: heartbeat every ttl/3, stale after the configured 2m
		30 * time.Second: {LockTTL: 30 * time.Second, HeartbeatInterval: 10 * time.Second, StaleAfter: 2 * time.Minute},
		// long: the configured heartbeat, stale no sooner than the ttl
		10 * time.Minute: {LockTTL: 10 * time.Minute, HeartbeatInterval: time.Minute, StaleAfter: 10 * time.Minute},
	} {
		got := guard.LeaseConfig(cfg, ttl)
		if got.Backend != want {
			t.Errorf("ttl %s: %+v, want %+v", ttl, got.Backend, want)
		}
	}
	if cfg.Backend.LockTTL != 5*time.Minute {
		t.Errorf("LeaseConfig changed its argument: %+v", cfg.Backend)
	}
}

// Only a 5xx is DOWN: a redirect, an access error, a missing page or a
// refused method say the status_url is wrong, and a wrong URL must never
// make a sharer look stopped.
func TestMisconfiguredStatusURLsCountAsUpWithAWarning(t *testing.T) {
	codes := map[string]int{"ok": 200, "e500": 500, "e503": 503, "r301": 301, "r302": 302, "r307": 307,
		"e401": 401, "e403": 403, "e404": 404, "e405": 405, "e429": 429, "e400": 400, "s204": 204}
	urls := map[string]string{"me": newApp(t).srv.URL}
	for app, code := range codes {
		a := newApp(t)
		a.code.Store(int32(code))
		urls[app] = a.srv.URL
	}
	r := newRig(t, "file://"+t.TempDir(), urls, time.Second)
	var logBuf bytes.Buffer
	g := r.guard()
	g.Log = &syncWriter{w: &logBuf}
	res, err := g.Stop(context.Background(), r.cfg, "db", "me", false)
	if err != nil {
		t.Fatal(err)
	}
	want := "e400=UNKNOWN,e401=UNKNOWN,e403=UNKNOWN,e404=UNKNOWN,e405=UNKNOWN,e429=UNKNOWN,e500=DOWN,e503=DOWN,ok=UP," +
		"r301=UNKNOWN,r302=UNKNOWN,r307=UNKNOWN,s204=UNKNOWN"
	if got := statuses(res); got != want || res.Decision != guard.SkippedSharedActive {
		t.Fatalf("statuses %s (decision %s), want %s", got, res.Decision, want)
	}
	for _, s := range res.Sharers {
		if s.Status == guard.Unknown && !strings.Contains(logBuf.String(), fmt.Sprintf("warning: %s answered HTTP %d", s.App, codes[s.App])) {
			t.Errorf("no warning for %s:\n%s", s.App, logBuf.String())
		}
		if s.Status == guard.Unknown && !strings.Contains(logBuf.String(), s.URL+": counted as UP") {
			t.Errorf("the warning should name %s's URL %s:\n%s", s.App, s.URL, logBuf.String())
		}
	}
	// Every other sharer 404: nothing is stopped.
	delete(urls, "ok")
	for app := range urls {
		if app != "me" && app != "e404" {
			delete(urls, app)
		}
	}
	r = newRig(t, "file://"+t.TempDir(), urls, time.Second)
	if res := r.stop("me"); res.Decision != guard.SkippedSharedActive || len(r.lines("stops.log")) != 0 {
		t.Fatalf("a 404 stopped the resource: %+v", res)
	}
}

// The stop command starts from Deps.Environ without the secrets key, with
// the resource and the application being stopped.
func TestStopCommandGetsTheEnvironmentWithoutTheSecretsKey(t *testing.T) {
	a := newApp(t)
	r := newRig(t, "file://"+t.TempDir(), map[string]string{"only": a.srv.URL}, time.Second)
	r.cfg.Shared["db"].Stop = `echo "team=$TEAM secrets=$DEPLOYER_SECRETS_PASSPHRASE$PULUMI_CONFIG_PASSPHRASE_FILE guard=$DEPLOYER_GUARD_RESOURCE/$DEPLOYER_GUARD_AS"`
	g := r.guard()
	g.Environ = func() []string {
		return []string{"PATH=/usr/bin:/bin", "TEAM=payments", "DEPLOYER_SECRETS_PASSPHRASE=hunter2", "PULUMI_CONFIG_PASSPHRASE_FILE=/run/key"}
	}
	res, err := g.Stop(context.Background(), r.cfg, "db", "only", false)
	if err != nil || res.Stop == nil {
		t.Fatalf("guard stop = %+v, %v", res, err)
	}
	if got, want := res.Stop.Output, "team=payments secrets= guard=db/only\n"; got != want {
		t.Errorf("the stop command printed %q, want %q", got, want)
	}
}

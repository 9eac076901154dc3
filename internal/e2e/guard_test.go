//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// statusServer is an application's status endpoint on loopback: 200 while
// the application is up, 503 once it is stopped (as a platform's
// quick-status endpoint answers).
type statusServer struct {
	srv  *httptest.Server
	code atomic.Int32
}

func newStatusServer(t *testing.T) *statusServer {
	s := &statusServer{}
	s.code.Store(http.StatusOK)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(s.code.Load()))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// waitBound guards against a hang; the tests are bounded by work (the
// processes finishing, a file appearing), not by this.
const waitBound = 2 * time.Minute

func (s *statusServer) stop() { s.code.Store(http.StatusServiceUnavailable) }

// guardStopScript records each run in stops.log and overlapping runs in
// overlaps.log.
const guardStopScript = `mkdir .running 2>/dev/null || echo overlap >> overlaps.log
echo "$DEPLOYER_GUARD_AS" >> stops.log
sleep 0.3
rmdir .running
`

// guardProject writes a deployer.yaml whose shared resource db is shared
// by the given apps, on lock backend kind (file or redis).
func guardProject(t *testing.T, kind string, urls map[string]string) *project {
	p := newProject(t, "stack: shop\n")
	r := newRemote(t, kind, "file", p.dir, true)
	p.env = append(p.env, r.env...)
	apps := make([]string, 0, len(urls))
	for a := range urls {
		apps = append(apps, a)
	}
	sort.Strings(apps)
	var b strings.Builder
	fmt.Fprintf(&b, "stack: shop\nbackend:\n  lock: %s\n  state: %s\nenvironments: {dev: {}}\nshared:\n  db:\n    stop: sh ./stop.sh\n    lock_ttl: 30s\n    status_timeout: 500ms\n    sharers:\n", r.lock, r.state)
	for _, a := range apps {
		fmt.Fprintf(&b, "      %s: {status_url: %q}\n", a, urls[a])
	}
	p.write("deployer.yaml", b.String())
	p.write("stop.sh", guardStopScript)
	return p
}

func (p *project) lines(name string) []string {
	data, err := os.ReadFile(filepath.Join(p.dir, name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.Fields(string(data))
}

type guardJSON struct {
	Resource string `json:"resource"`
	Decision string `json:"decision"`
	Sharers  []struct {
		App      string `json:"app"`
		Status   string `json:"status"`
		HTTPCode *int   `json:"http_code"`
	} `json:"sharers"`
	Lock *struct {
		Key      string `json:"key"`
		Acquired bool   `json:"acquired"`
		Retries  int    `json:"retries"`
	} `json:"lock"`
}

func decode(t *testing.T, r result) guardJSON {
	t.Helper()
	var g guardJSON
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatalf("guard --json: %v\n%s", err, r)
	}
	return g
}

func TestGuardStopsTheSharedDatabaseWithTheLastApp(t *testing.T) {
	for _, kind := range []string{"file", "redis"} {
		t.Run(kind, func(t *testing.T) {
			a, b, c := newStatusServer(t), newStatusServer(t), newStatusServer(t)
			p := guardProject(t, kind, map[string]string{"a": a.srv.URL, "b": b.srv.URL, "c": c.srv.URL})

			r := p.mustRun(0, "guard", "status", "db")
			if strings.Count(r.stdout, "UP") != 3 {
				t.Fatalf("guard status: %s", r)
			}
			a.stop()
			r = p.mustRun(2, "guard", "stop", "db", "--as", "a", "--detailed-exitcode")
			if !strings.Contains(r.stdout, "db: skipped_shared_active (not stopped: still used by b, c)") {
				t.Fatalf("all UP: %s", r)
			}
			b.stop()
			g := decode(t, p.mustRun(0, "guard", "stop", "db", "--as", "b", "--json"))
			if g.Decision != "skipped_shared_active" || len(g.Sharers) != 2 || g.Sharers[0].Status != "DOWN" || *g.Sharers[0].HTTPCode != 503 || g.Sharers[1].Status != "UP" {
				t.Fatalf("c UP: %+v", g)
			}
			c.stop()
			r = p.mustRun(0, "guard", "stop", "db", "--as", "c", "--detailed-exitcode")
			if !strings.Contains(r.stdout, "db: stopped (every other sharer is DOWN)") || !strings.Contains(r.stderr, "all sharing applications are DOWN") {
				t.Fatalf("all DOWN: %s", r)
			}
			if got := p.lines("stops.log"); len(got) != 1 || got[0] != "c" {
				t.Fatalf("the stop ran %v, want once as c", got)
			}
			// The kept lock shows in state locks with operation guard.
			locks := p.locks()
			if len(locks) != 1 || locks[0].LockKey != "custom:guard-db" || locks[0].Metadata.Operation != "guard" {
				t.Fatalf("state locks: %+v", locks)
			}
		})
	}
}

func TestGuardRacingStopsRunTheCommandOnce(t *testing.T) {
	for _, kind := range []string{"file", "redis"} {
		t.Run(kind, func(t *testing.T) {
			urls := map[string]string{}
			for _, app := range []string{"a", "b", "c"} {
				s := newStatusServer(t)
				s.stop()
				urls[app] = s.srv.URL
			}
			p := guardProject(t, kind, urls)
			ra, rb := p.start("guard", "stop", "db", "--as", "a"), p.start("guard", "stop", "db", "--as", "b")
			resA, resB := ra.wait(t, waitBound), rb.wait(t, waitBound)
			for _, r := range []result{resA, resB} {
				if r.code != 0 || !(strings.Contains(r.stdout, "db: stopped") || strings.Contains(r.stdout, "db: skipped_lock")) {
					t.Fatalf("each process prints its decision: %s", r)
				}
			}
			if got := p.lines("stops.log"); len(got) != 1 || len(p.lines("overlaps.log")) != 0 {
				t.Fatalf("the stop ran %v (overlaps %v)\n%s\n%s", got, p.lines("overlaps.log"), resA, resB)
			}
		})
	}
}

func TestGuardSkipsWhenTheLockIsHeldOrASharerDoesNotAnswer(t *testing.T) {
	for _, kind := range []string{"file", "redis"} {
		t.Run(kind, func(t *testing.T) {
			a, b := newStatusServer(t), newStatusServer(t)
			b.stop()
			ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			p := guardProject(t, kind, map[string]string{"a": a.srv.URL, "b": b.srv.URL, "mute": "http://" + ln.Addr().String() + "/"})
			g := decode(t, p.mustRun(2, "guard", "stop", "db", "--as", "a", "--json", "--detailed-exitcode"))
			if g.Decision != "skipped_shared_active" || g.Sharers[1].App != "mute" || g.Sharers[1].Status != "UNKNOWN" || g.Sharers[1].HTTPCode != nil {
				t.Fatalf("a stalled sharer is UNKNOWN: %+v", g)
			}

			// Another process holds the resource's lock for longer than the retries last.
			holder := p.start("lock", "exec", "--key", "guard-db", "--", "sh", "-c", "touch held; exec sleep 600")
			eventually(t, waitBound, "lock exec to hold the lock", func() bool {
				_, err := os.Stat(filepath.Join(p.dir, "held"))
				return err == nil
			})
			r := p.mustRun(0, "guard", "stop", "db", "--as", "mute")
			if !strings.Contains(r.stdout, "db: skipped_lock (not stopped: its lock is held, fail safe)") || !strings.Contains(r.stdout, "gave up after 3 retries") {
				t.Fatalf("held lock: %s", r)
			}
			g = decode(t, p.mustRun(3, "guard", "stop", "db", "--as", "mute", "--json", "--detailed-exitcode"))
			if g.Decision != "skipped_lock" || g.Lock.Acquired || g.Lock.Retries != 3 {
				t.Fatalf("held lock, JSON: %+v", g)
			}
			if len(p.lines("stops.log")) != 0 {
				t.Fatal("the stop ran without the lock")
			}
			// Ctrl-C ends lock exec and its command, which releases the lock.
			if err := holder.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if r := holder.wait(t, waitBound); r.code != 130 {
				t.Fatalf("lock exec after Ctrl-C: %s", r)
			}
			g = decode(t, p.mustRun(2, "guard", "stop", "db", "--as", "mute", "--json", "--detailed-exitcode"))
			if g.Decision != "skipped_shared_active" || !g.Lock.Acquired {
				t.Fatalf("after the holder released: %+v", g)
			}
		})
	}
}

func TestGuardDedicatedResourceStopsWithoutALock(t *testing.T) {
	a := newStatusServer(t)
	p := guardProject(t, "file", map[string]string{"solo": a.srv.URL})
	r := p.mustRun(0, "guard", "stop", "db", "--as", "solo")
	if !strings.Contains(r.stdout, "db: dedicated_stopped") || len(p.lines("stops.log")) != 1 {
		t.Fatalf("%s", r)
	}
	if len(p.locks()) != 0 {
		t.Fatal("a dedicated stop took a lock")
	}
	r = p.mustRun(2, "guard", "stop", "db", "--as", "nobody")
	if !strings.Contains(r.stderr, `"nobody" is not a sharer of db (sharers: solo)`) {
		t.Fatalf("%s", r)
	}
}

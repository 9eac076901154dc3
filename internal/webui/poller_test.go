package webui

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// sseClient reads one viewer's server-sent events.
type sseClient struct {
	r      *bufio.Reader
	cancel func()
}

func openEvents(t *testing.T, url string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/events/locks", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /events/locks = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	c := &sseClient{r: bufio.NewReader(resp.Body), cancel: cancel}
	if line, err := c.r.ReadString('\n'); err != nil || line != ": subscribed\n" {
		t.Fatalf("first line %q, %v; want the subscribed comment", line, err)
	}
	return c
}

// next returns the id and data of the next event.
func (c *sseClient) next(t *testing.T) (uint64, string) {
	t.Helper()
	var id uint64
	var data strings.Builder
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && data.Len() > 0:
			return id, data.String()
		case strings.HasPrefix(line, "id: "):
			id, _ = strconv.ParseUint(line[4:], 10, 64)
		case strings.HasPrefix(line, "data: "):
			data.WriteString(line[6:] + "\n")
		}
	}
}

// One poller for every viewer: with 8 viewers open, each tick lists the
// lock backend as often as one `deployer state locks` does, and every
// viewer gets the new table when it changed: a lock appearing, nothing
// on a tick that changed nothing, the lock going away.
func TestPollerOneListPerIntervalForNViewers(t *testing.T) {
	b, m := fileLocks(t)
	// What one listing costs the backend (locks and the wait queue).
	if _, err := stateops.NewLocking(stateops.LockDeps{Locks: m}).Locks(context.Background(), stateops.LocksRequest{}); err != nil {
		t.Fatal(err)
	}
	perListing := b.lists.Swap(0)
	ticks := make(manualTicker)
	ts, srv := serve(t, Config{Locks: []LockSource{lockSource(m)}, Ticker: ticks.ticker})
	const viewers = 8
	var cs []*sseClient
	for range viewers {
		cs = append(cs, openEvents(t, ts.URL))
	}
	if n := srv.Poller().Subscribers(); n != viewers { // before the test's own
		t.Fatalf("%d subscribers, want %d", n, viewers)
	}
	if n := b.lists.Load(); n != 0 {
		t.Fatalf("opening %d viewers listed the backend %d times, want 0 (only ticks list)", viewers, n)
	}
	key := lockmgr.StackKey("payments", "prod")
	rec := hold(t, b, key, "alice@build-7", lockmgr.Metadata{Hostname: "build-7", PID: 4242, Operation: lockmgr.OpDeploy}, time.Now())
	expect := func(tick uint64, wantLock bool) {
		t.Helper()
		for v, c := range cs {
			id, data := c.next(t)
			if id != tick {
				t.Fatalf("viewer %d got event %d, want %d", v, id, tick)
			}
			if got := strings.Contains(data, "alice@build-7"); got != wantLock {
				t.Fatalf("tick %d: viewer %d sees the lock: %v, want %v:\n%s", tick, v, got, wantLock, data)
			}
		}
		if n, want := b.lists.Load(), int64(tick)*perListing; n != want {
			t.Fatalf("after %d ticks with %d viewers the backend was listed %d times, want %d (%d per listing)", tick, viewers, n, want, perListing)
		}
	}
	// The test watches the polls too, to know when one is done.
	polls, stop := srv.Poller().Subscribe()
	defer stop()
	ticks <- time.Now()
	<-polls
	expect(1, true)
	// Tick 2 changes nothing: no event, the next one read is tick 3's.
	ticks <- time.Now()
	if snap := <-polls; snap.Seq != 2 {
		t.Fatalf("poll %d, want 2", snap.Seq)
	}
	if err := b.Release(context.Background(), key, rec.LockID); err != nil {
		t.Fatal(err)
	}
	ticks <- time.Now()
	<-polls
	expect(3, false)
}

// A page load between ticks reuses the newest listing.
func TestLocksPageReusesAFreshListing(t *testing.T) {
	b, m := fileLocks(t)
	var now atomic.Int64 // the server's clock, moved by the test
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	ts, _ := serve(t, Config{Locks: []LockSource{lockSource(m)}, Now: clock, Poll: time.Minute, Ticker: make(manualTicker).ticker})
	for range 3 {
		if code, _, _ := get(t, ts, "/locks"); code != 200 {
			t.Fatalf("GET /locks = %d", code)
		}
	}
	first := b.lists.Load()
	if first == 0 {
		t.Fatal("the first page load listed nothing")
	}
	now.Add(int64(2 * time.Minute))
	get(t, ts, "/locks")
	if b.lists.Load() != 2*first {
		t.Fatalf("lists %d after a load past the interval, want %d", b.lists.Load(), 2*first)
	}
}

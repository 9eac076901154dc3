package faulttest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Match decides whether a request's reply is dropped; body is the request
// body (already read; the request's Body is readable again).
type Match func(r *http.Request, body []byte) bool

// ReplyDropper is an HTTP proxy in front of one server. Each armed rule drops
// the reply of the next request it matches, once. Safe for concurrent use.
type ReplyDropper struct {
	URL      string // http://127.0.0.1:PORT, the endpoint to give the client
	upstream *url.URL
	proxy    *httputil.ReverseProxy
	client   *http.Client

	mu          sync.Mutex
	partitioned bool
	rules       []Match
	dropped     []string // "METHOD path" of each dropped reply, in order
}

// NewReplyDropper starts a proxy in front of upstream (e.g. the dynalite or
// MinIO endpoint); it stops when the test ends.
func NewReplyDropper(tb testing.TB, upstream string) *ReplyDropper {
	tb.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		tb.Fatalf("upstream %q: %v", upstream, err)
	}
	d := &ReplyDropper{upstream: u, proxy: httputil.NewSingleHostReverseProxy(u), client: &http.Client{}}
	srv := httptest.NewServer(d)
	tb.Cleanup(srv.Close)
	d.URL = srv.URL
	return d
}

// DropNext arms a rule: the next request that m matches is forwarded, its
// reply read from the server and thrown away, and the client's connection
// closed.
func (d *ReplyDropper) DropNext(m Match) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rules = append(d.rules, m)
}

// Partition cuts (on) or heals (off) the network between client and server:
// while cut, every request hangs unanswered until the client gives up, and
// nothing reaches the server.
func (d *ReplyDropper) Partition(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.partitioned = on
}

// Dropped returns "METHOD path" of every reply dropped so far.
func (d *ReplyDropper) Dropped() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dropped...)
}

// Armed reports how many rules have not fired yet.
func (d *ReplyDropper) Armed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.rules)
}

func (d *ReplyDropper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	d.mu.Lock()
	cut := d.partitioned
	d.mu.Unlock()
	if cut {
		<-r.Context().Done() // the client timed out or closed the connection
		return
	}
	if !d.take(r, body) {
		d.proxy.ServeHTTP(w, r)
		return
	}
	// Forward as the reverse proxy would, wait for the server's reply (the
	// write is applied), then drop it and the connection.
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = d.upstream.Scheme, d.upstream.Host
	out.Host = r.Host // the client signed this Host (SigV4)
	out.Body = io.NopCloser(bytes.NewReader(body))
	if resp, err := d.client.Do(out); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("faulttest: response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func (d *ReplyDropper) take(r *http.Request, body []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, m := range d.rules {
		if m(r, body) {
			d.rules = append(d.rules[:i], d.rules[i+1:]...)
			d.dropped = append(d.dropped, r.Method+" "+r.URL.Path)
			return true
		}
	}
	return false
}

// DynamoDB matches a DynamoDB API call by operation ("UpdateItem") whose JSON
// body contains every one of substrings (e.g. an update expression).
func DynamoDB(op string, substrings ...string) Match {
	return func(r *http.Request, body []byte) bool {
		if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+op) {
			return false
		}
		for _, s := range substrings {
			if !bytes.Contains(body, []byte(s)) {
				return false
			}
		}
		return true
	}
}

// S3Put matches a PUT of an object whose key contains keyPart (and whose body
// contains every one of substrings).
func S3Put(keyPart string, substrings ...string) Match {
	return func(r *http.Request, body []byte) bool {
		if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, keyPart) || r.URL.RawQuery != "" && !strings.Contains(r.URL.RawQuery, "x-id=PutObject") {
			return false
		}
		for _, s := range substrings {
			if !bytes.Contains(body, []byte(s)) {
				return false
			}
		}
		return true
	}
}

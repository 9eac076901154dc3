package guard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
)

// Status is a sharer's quick status.
type Status string

// Statuses (docs/guard.md): only HTTP 200 is UP, only a 5xx is DOWN;
// UNKNOWN (no answer, or an answer that says the URL is wrong) counts as UP.
const (
	Up      Status = "UP"
	Down    Status = "DOWN"
	Unknown Status = "UNKNOWN"
)

// SharerStatus is the quick status record of one sharer, as the design's
// quick-status endpoint returns it, plus the URL checked and, for UNKNOWN,
// why.
type SharerStatus struct {
	App       string    `json:"app"`
	Status    Status    `json:"status"`
	HTTPCode  *int      `json:"http_code"` // null unless the server answered
	Timestamp time.Time `json:"timestamp"` // when the check ended, UTC
	URL       string    `json:"url"`
	Error     string    `json:"error,omitempty"`
}

// Active reports whether the sharer counts as running: UP or UNKNOWN.
func (s SharerStatus) Active() bool { return s.Status != Down }

// NewClient returns the HTTP client of the status checks: it does not follow
// redirects (a 3xx is UNKNOWN, a misconfigured URL) and keeps no idle
// connections.
func NewClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableKeepAlives = true
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// checkAll HEADs the status URL of each app concurrently, each bounded by
// timeout, and returns the statuses ordered by app name. When ctx ends
// first it returns ctx's error.
func (g *Guard) checkAll(ctx context.Context, res *config.Shared, apps []string) ([]SharerStatus, error) {
	out := make([]SharerStatus, len(apps))
	var wg sync.WaitGroup
	for i, app := range apps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = g.check(ctx, app, res.Sharers[app].StatusURL, res.StatusTimeout)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	for _, s := range out {
		switch {
		case s.Status == Up:
			g.logf("%s is UP (HTTP %d)", s.App, *s.HTTPCode)
		case s.Status == Down:
			g.logf("%s is DOWN (HTTP %d)", s.App, *s.HTTPCode)
		case s.HTTPCode != nil:
			g.logf("warning: %s answered %s at %s: counted as UP", s.App, s.Error, s.URL)
		default:
			g.logf("%s is UNKNOWN (%s): counted as UP", s.App, s.Error)
		}
	}
	return out, nil
}

func (g *Guard) check(ctx context.Context, app, url string, timeout time.Duration) SharerStatus {
	st := SharerStatus{App: app, URL: url, Status: Unknown}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodHead, url, nil)
	if err == nil {
		var resp *http.Response
		resp, err = g.client.Do(req)
		if err == nil {
			resp.Body.Close()
			code := resp.StatusCode
			st.HTTPCode = &code
			st.Status, st.Error = classify(code)
		}
	}
	st.Timestamp = g.now().UTC()
	if err != nil {
		st.Error = describe(err, timeout)
	}
	return st
}

// classify maps an HTTP answer to a status (docs/guard.md#the-rules): 200 is
// UP; a 5xx, the answer of a stopped application, is DOWN; anything else
// (a redirect, 401, 403, 404, 405, 429, any other code) says the URL is
// not a status endpoint that works, so it is UNKNOWN, counted as UP, with
// why: a mistyped URL must never make a sharer look stopped.
func classify(code int) (Status, string) {
	switch {
	case code == http.StatusOK:
		return Up, ""
	case code >= 500 && code <= 599:
		return Down, ""
	case code >= 300 && code <= 399:
		return Unknown, fmt.Sprintf("HTTP %d, a redirect (not followed): check status_url", code)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return Unknown, fmt.Sprintf("HTTP %d, access denied: check status_url and the endpoint's access rules", code)
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		return Unknown, fmt.Sprintf("HTTP %d: check status_url (it must answer HEAD with 200 when up, 5xx when stopped)", code)
	case code == http.StatusTooManyRequests:
		return Unknown, fmt.Sprintf("HTTP %d, rate limited", code)
	}
	return Unknown, fmt.Sprintf("HTTP %d, not 200 (up) or 5xx (stopped): check status_url", code)
}

func describe(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Op + ": " + op.Err.Error() // "dial: connect: connection refused"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// appNames returns the sharers of res, sorted, leaving out skip.
func appNames(res *config.Shared, skip string) []string {
	var apps []string
	for app := range res.Sharers {
		if app != skip {
			apps = append(apps, app)
		}
	}
	sort.Strings(apps)
	return apps
}

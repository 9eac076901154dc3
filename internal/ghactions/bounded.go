package ghactions

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// maxResponseBytes bounds one response of the GitHub API read by
// UpsertComment: a page of 100 comments of MaxCommentChars characters (at
// most 4 bytes each) with their JSON is about 27 MB (docs/github-actions.md,
// "Plan comments on pull requests").
const maxResponseBytes int64 = 64 << 20

// bounded returns a copy of hc whose responses are read, before the caller
// sees them, to at most limit bytes: a longer body (GITHUB_API_URL naming
// something that is not the GitHub API) is an error naming the URL.
func bounded(hc *http.Client, limit int64) *http.Client {
	c := *hc
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = boundedTransport{rt: rt, limit: limit}
	return &c
}

type boundedTransport struct {
	rt    http.RoundTripper
	limit int64
}

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var data []byte
	over := resp.ContentLength > t.limit
	if !over {
		data, over, err = inputfile.ReadAtMost(resp.Body, t.limit)
	}
	if err == nil && over {
		err = fmt.Errorf("the answer is over the limit of %s for a GitHub API response: check that GITHUB_API_URL (%s) names the GitHub API",
			inputfile.Size(t.limit), req.URL.Scheme+"://"+req.URL.Host)
	}
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

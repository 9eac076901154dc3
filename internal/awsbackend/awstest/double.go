package awstest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/deployer-dev/deployer/internal/awsbackend"
)

// CarelessS3 is an S3 test double that stores nothing and accepts every PUT,
// ignoring If-None-Match and If-Match, as some S3-compatible stores do. Puts
// counts the PUT requests it received.
type CarelessS3 struct {
	URL  string
	Puts atomic.Int64
}

// NewCarelessS3 starts the double; it stops when the test ends. Options
// returns settings that point a backend at it.
func NewCarelessS3(tb testing.TB) *CarelessS3 {
	d := &CarelessS3{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.Method {
		case http.MethodPut:
			d.Puts.Add(1)
			w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
			w.WriteHeader(http.StatusOK)
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>not found</Message></Error>`)
		}
	}))
	tb.Cleanup(srv.Close)
	d.URL = srv.URL
	return d
}

// Options points the S3 client at the double, path-style, static keys.
func (d *CarelessS3) Options() awsbackend.Options {
	return awsbackend.Options{S3Endpoint: d.URL, PathStyle: true, Region: "us-east-1", AccessKeyID: "test", SecretAccessKey: "test"}
}

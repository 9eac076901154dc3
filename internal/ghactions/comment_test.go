package ghactions_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deployer-dev/deployer/internal/ghactions"
)

// A GITHUB_API_URL that answers without end (not the GitHub API) gives an
// error naming the limit and the variable, after 64 MiB read, not all of it.
func TestUpsertCommentBoundsTheAnswer(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte("[" + strings.Repeat(" ", 1<<20))
		for sent.Load() < 1<<30 {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
			chunk = chunk[1:]
		}
	}))
	defer srv.Close()
	pr := ghactions.PullRequest{Owner: "o", Repo: "r", Number: 1, APIURL: srv.URL, Token: "t"}
	_, _, err := ghactions.UpsertComment(context.Background(), srv.Client(), pr, "<!-- m -->", "<!-- m --> plan")
	var ce *ghactions.CommentError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "over the limit of 64 MiB for a GitHub API response") || !strings.Contains(err.Error(), "GITHUB_API_URL") {
		t.Fatalf("want the limit named, got %v", err)
	}
	t.Log(err)
	if n := sent.Load(); n >= 1<<30 {
		t.Fatalf("the whole answer was read (%d bytes)", n)
	}
}

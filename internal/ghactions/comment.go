package ghactions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/go-github/v88/github"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// MaxCommentChars is the longest body GitHub accepts for an issue or pull
// request comment (its API refuses longer ones with 422).
const MaxCommentChars = 65536

// PullRequest is the pull request a workflow run belongs to, and how to
// reach the REST API for it.
type PullRequest struct {
	Owner, Repo string
	Number      int
	// APIURL is GITHUB_API_URL (https://api.github.com, or a GitHub
	// Enterprise Server's /api/v3).
	APIURL string
	Token  string
}

// ErrNotPullRequest: the run has no pull request to comment on (not a
// pull_request or pull_request_target event).
var ErrNotPullRequest = errors.New("this run is not for a pull request (comments are posted on pull_request and pull_request_target events)")

// DetectPullRequest finds the run's pull request from the runner's
// variables through getenv: GITHUB_REPOSITORY, the event payload at
// GITHUB_EVENT_PATH (pull_request.number), else GITHUB_REF
// (refs/pull/N/merge); GITHUB_API_URL and GITHUB_TOKEN. Errors:
// ErrNotPullRequest, or a clear error for a missing token or repository.
func DetectPullRequest(getenv func(string) string) (PullRequest, error) {
	pr := PullRequest{APIURL: getenv("GITHUB_API_URL"), Token: getenv("GITHUB_TOKEN")}
	if pr.APIURL == "" {
		pr.APIURL = "https://api.github.com"
	}
	owner, repo, ok := strings.Cut(getenv("GITHUB_REPOSITORY"), "/")
	if !ok || owner == "" || repo == "" {
		return pr, errors.New("GITHUB_REPOSITORY is not set to OWNER/REPO: comments are posted from GitHub Actions")
	}
	pr.Owner, pr.Repo = owner, repo
	if p := getenv("GITHUB_EVENT_PATH"); p != "" {
		if data, err := inputfile.Read(p, "GitHub event payload", inputfile.MaxConfigBytes); err == nil {
			var ev struct {
				PullRequest *struct {
					Number int `json:"number"`
				} `json:"pull_request"`
			}
			if json.Unmarshal(data, &ev) == nil && ev.PullRequest != nil {
				pr.Number = ev.PullRequest.Number
			}
		}
	}
	if pr.Number == 0 {
		if rest, ok := strings.CutPrefix(getenv("GITHUB_REF"), "refs/pull/"); ok {
			n, _, _ := strings.Cut(rest, "/")
			pr.Number, _ = strconv.Atoi(n)
		}
	}
	if pr.Number <= 0 {
		return pr, ErrNotPullRequest
	}
	if pr.Token == "" {
		return pr, errors.New("GITHUB_TOKEN is not set: pass it to the step (env: GITHUB_TOKEN: ${{ github.token }}; the action does) with permissions: pull-requests: write")
	}
	return pr, nil
}

// CommentError is a failed request to the comments API. Forbidden is true
// for 403 and 404 (a token without pull-requests: write sees either).
type CommentError struct {
	Op        string // "list comments", "get the token's user", "create comment", "update comment"
	Status    int    // HTTP status, 0 without an answer
	Forbidden bool
	Err       error
}

func (e *CommentError) Error() string {
	msg := fmt.Sprintf("%s: %v", e.Op, e.Err)
	if e.Forbidden {
		msg += " (the token may not write pull request comments: give the job permissions: pull-requests: write)"
	}
	return msg
}

func (e *CommentError) Unwrap() error { return e.Err }

// UpsertComment creates the comment of pr whose body starts with marker (a
// hidden HTML comment naming what it is for, such as one stack and
// environment), or updates the first such comment written by the token's
// own user (CommentAuthor) in place; a comment by anyone else, or one that
// holds the marker elsewhere than at its start (quoting data), is left
// alone. It returns the comment's URL and whether it was created. body
// must start with marker and be at most MaxCommentChars long. Errors are
// *CommentError.
func UpsertComment(ctx context.Context, hc *http.Client, pr PullRequest, marker, body string) (commentURL string, created bool, err error) {
	if !strings.HasPrefix(body, marker) {
		return "", false, fmt.Errorf("comment body does not start with its marker %q", marker)
	}
	if n := len([]rune(body)); n > MaxCommentChars {
		return "", false, fmt.Errorf("comment body has %d characters, more than GitHub's %d", n, MaxCommentChars)
	}
	c, err := newClient(hc, pr)
	if err != nil {
		return "", false, err
	}
	found, err := findComments(ctx, c, pr, marker)
	if err != nil {
		return "", false, err
	}
	if len(found) > 0 {
		cm, resp, err := c.Issues.EditComment(ctx, pr.Owner, pr.Repo, found[0].GetID(), &github.IssueComment{Body: github.Ptr(body)})
		if err != nil {
			return "", false, commentErr("update comment", resp, err)
		}
		return cm.GetHTMLURL(), false, nil
	}
	cm, resp, err := c.Issues.CreateComment(ctx, pr.Owner, pr.Repo, pr.Number, &github.IssueComment{Body: github.Ptr(body)})
	if err != nil {
		return "", false, commentErr("create comment", resp, err)
	}
	return cm.GetHTMLURL(), true, nil
}

// ActionsBot is the login of the comments the job's GITHUB_TOKEN writes.
const ActionsBot = "github-actions[bot]"

// newClient is the REST client of pr's API with its token, reading at most
// maxResponseBytes of an answer.
func newClient(hc *http.Client, pr PullRequest) (*github.Client, error) {
	base := strings.TrimSuffix(pr.APIURL, "/") + "/"
	c, err := github.NewClient(github.WithHTTPClient(bounded(hc, maxResponseBytes)), github.WithAuthToken(pr.Token), github.WithURLs(&base, nil))
	if err != nil {
		return nil, fmt.Errorf("GitHub API client for GITHUB_API_URL %q: %w", pr.APIURL, err)
	}
	return c, nil
}

// findComments returns the comments of pr that start with marker and were
// written by the token's user, oldest first (GitHub lists a pull
// request's comments by creation). The user is asked for (GET /user) only
// when a comment starts with the marker. Errors are *CommentError.
func findComments(ctx context.Context, c *github.Client, pr PullRequest, marker string) ([]*github.IssueComment, error) {
	author := ""
	var found []*github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.Issues.ListComments(ctx, pr.Owner, pr.Repo, pr.Number, opts)
		if err != nil {
			return nil, commentErr("list comments", resp, err)
		}
		for _, cm := range page {
			if !strings.HasPrefix(cm.GetBody(), marker) {
				continue
			}
			if author == "" {
				if author, err = commentAuthor(ctx, c); err != nil {
					return nil, err
				}
			}
			// GitHub logins are case-insensitive.
			if strings.EqualFold(cm.GetUser().GetLogin(), author) {
				found = append(found, cm)
			}
		}
		if resp.NextPage == 0 {
			return found, nil
		}
		opts.Page = resp.NextPage
	}
}

// commentAuthor is the login the token writes comments as: its user (GET
// /user), or ActionsBot when GitHub refuses GET /user to the token (401,
// 403 or 404: an installation token such as the job's GITHUB_TOKEN).
func commentAuthor(ctx context.Context, c *github.Client) (string, error) {
	u, resp, err := c.Users.Get(ctx, "")
	if err == nil && u.GetLogin() != "" {
		return u.GetLogin(), nil
	}
	if resp != nil && resp.Response != nil {
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return ActionsBot, nil
		}
	}
	if err == nil {
		err = errors.New("the answer names no login")
	}
	return "", commentErr("get the token's user", resp, err)
}

func commentErr(op string, resp *github.Response, err error) error {
	e := &CommentError{Op: op, Err: err}
	if resp != nil && resp.Response != nil {
		e.Status = resp.StatusCode
		e.Forbidden = resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound
	}
	return e
}

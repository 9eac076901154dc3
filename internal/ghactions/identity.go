package ghactions

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/deployer-dev/deployer/internal/policy"
)

// OIDCAudience is the audience deployer asks the runner's OIDC token for
// (the aud claim it checks).
const OIDCAudience = "deployer"

// maxTokenBytes bounds the answer of the runner's token endpoint.
const maxTokenBytes = 64 << 10

// VouchedActor returns who runs this GitHub Actions job as GitHub vouches
// for it, for --override-policy (docs/policy.md#overrides), never from
// GITHUB_ACTOR (any step can set it):
//
//   - with ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN
//     (the job has permissions: id-token: write), the actor claim of an
//     OIDC token the runner issues for OIDCAudience, as actions/core's
//     getIDToken asks for it; its repository and run_id claims must be
//     GITHUB_REPOSITORY's and GITHUB_RUN_ID's. The token comes from the
//     runner over the job's own channel; its signature is not checked
//     against GitHub's keys (the runner may have no route to them). On a
//     re-run (run_attempt above 1) the claim is the first attempt's
//     actor, so the run's triggering_actor is read as below;
//   - else, with GITHUB_TOKEN, the workflow run's triggering_actor (else
//     actor) read from GET /repos/{owner}/{repo}/actions/runs/{GITHUB_RUN_ID}
//     of GITHUB_API_URL (the token needs actions: read).
//
// Errors say which permission the job lacks.
func VouchedActor(ctx context.Context, hc *http.Client, getenv func(string) string) (policy.Identity, error) {
	if u, tok := getenv("ACTIONS_ID_TOKEN_REQUEST_URL"), getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN"); u != "" && tok != "" {
		id, attempt, err := oidcActor(ctx, hc, u, tok, getenv)
		if err != nil || attempt == "" || attempt == "1" {
			return id, err
		}
		// A re-run: the token's actor is the first attempt's
		// (github.actor); who re-ran it is the run's triggering_actor.
		if getenv("GITHUB_TOKEN") == "" {
			return policy.Identity{}, fmt.Errorf("this is attempt %s of the run, and the OIDC token's actor (%s) is who started the first: pass GITHUB_TOKEN with permissions: actions: read so deployer reads who re-ran it", attempt, id.Login)
		}
		return runActor(ctx, hc, getenv)
	}
	if getenv("GITHUB_TOKEN") != "" {
		return runActor(ctx, hc, getenv)
	}
	return policy.Identity{}, errors.New("no identity GitHub vouches for: give the job permissions: id-token: write (deployer reads the OIDC token's actor), " +
		"or pass GITHUB_TOKEN with permissions: actions: read (deployer reads the run's triggering actor); GITHUB_ACTOR alone is not trusted")
}

// oidcActor returns the actor of the runner's OIDC token and its
// run_attempt claim.
func oidcActor(ctx context.Context, hc *http.Client, rawURL, token string, getenv func(string) string) (policy.Identity, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return policy.Identity{}, "", fmt.Errorf("ACTIONS_ID_TOKEN_REQUEST_URL: %w", err)
	}
	q := u.Query()
	q.Set("audience", OIDCAudience)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return policy.Identity{}, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	resp, err := bounded(hc, maxTokenBytes).Do(req)
	if err != nil {
		return policy.Identity{}, "", fmt.Errorf("request the OIDC token from the runner: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		Value string `json:"value"`
	}
	if resp.StatusCode != http.StatusOK {
		return policy.Identity{}, "", fmt.Errorf("request the OIDC token from the runner: HTTP %d (does the job have permissions: id-token: write?)", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Value == "" {
		return policy.Identity{}, "", fmt.Errorf("the runner's OIDC token answer holds no token (%v)", err)
	}
	parts := strings.Split(body.Value, ".")
	if len(parts) != 3 {
		return policy.Identity{}, "", errors.New("the runner's OIDC token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return policy.Identity{}, "", fmt.Errorf("the runner's OIDC token: %w", err)
	}
	var claims struct {
		Actor      string          `json:"actor"`
		Repository string          `json:"repository"`
		RunID      string          `json:"run_id"`
		RunAttempt string          `json:"run_attempt"`
		Aud        json.RawMessage `json:"aud"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return policy.Identity{}, "", fmt.Errorf("the runner's OIDC token's claims: %w", err)
	}
	var aud []string
	if json.Unmarshal(claims.Aud, &aud) != nil {
		var one string
		_ = json.Unmarshal(claims.Aud, &one)
		aud = []string{one}
	}
	switch {
	case claims.Actor == "":
		return policy.Identity{}, "", errors.New("the runner's OIDC token has no actor claim")
	case !slices.Contains(aud, OIDCAudience):
		return policy.Identity{}, "", fmt.Errorf("the runner's OIDC token is for audience %s, not %s", strings.Join(aud, ", "), OIDCAudience)
	case claims.Repository != getenv("GITHUB_REPOSITORY"):
		return policy.Identity{}, "", fmt.Errorf("the runner's OIDC token is for repository %q, not GITHUB_REPOSITORY %q", claims.Repository, getenv("GITHUB_REPOSITORY"))
	case claims.RunID != getenv("GITHUB_RUN_ID"):
		return policy.Identity{}, "", fmt.Errorf("the runner's OIDC token is for run %q, not GITHUB_RUN_ID %q", claims.RunID, getenv("GITHUB_RUN_ID"))
	}
	return policy.Identity{Login: claims.Actor, Source: "the actor claim of the GitHub Actions OIDC token", Verified: true}, claims.RunAttempt, nil
}

func runActor(ctx context.Context, hc *http.Client, getenv func(string) string) (policy.Identity, error) {
	owner, repo, ok := strings.Cut(getenv("GITHUB_REPOSITORY"), "/")
	if !ok || owner == "" || repo == "" {
		return policy.Identity{}, errors.New("GITHUB_REPOSITORY is not set to OWNER/REPO: the run's actor cannot be read")
	}
	id, err := strconv.ParseInt(getenv("GITHUB_RUN_ID"), 10, 64)
	if err != nil || id <= 0 {
		return policy.Identity{}, fmt.Errorf("GITHUB_RUN_ID %q is not a run id: the run's actor cannot be read", getenv("GITHUB_RUN_ID"))
	}
	api := getenv("GITHUB_API_URL")
	if api == "" {
		api = "https://api.github.com"
	}
	c, err := newClient(hc, PullRequest{APIURL: api, Token: getenv("GITHUB_TOKEN")})
	if err != nil {
		return policy.Identity{}, err
	}
	run, resp, err := c.Actions.GetWorkflowRunByID(ctx, owner, repo, id)
	if err != nil {
		msg := fmt.Sprintf("read workflow run %d from the GitHub API: %v", id, err)
		if resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound) {
			msg += " (give the job permissions: actions: read, or id-token: write for the OIDC token)"
		}
		return policy.Identity{}, errors.New(msg)
	}
	if login := run.GetTriggeringActor().GetLogin(); login != "" {
		return policy.Identity{Login: login, Source: fmt.Sprintf("the triggering_actor of workflow run %d (GitHub API)", id), Verified: true}, nil
	}
	if login := run.GetActor().GetLogin(); login != "" {
		return policy.Identity{Login: login, Source: fmt.Sprintf("the actor of workflow run %d (GitHub API)", id), Verified: true}, nil
	}
	return policy.Identity{}, fmt.Errorf("workflow run %d has no actor in the GitHub API's answer", id)
}

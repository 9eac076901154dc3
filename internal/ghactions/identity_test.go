package ghactions

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeJWT is a token of the runner's shape with claims; its signature is
// not checked (docs/policy.md#overrides).
func fakeJWT(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(b) + "." + enc([]byte("signature"))
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// The OIDC token endpoint of the runner, as actions/core's getIDToken
// calls it: GET ACTIONS_ID_TOKEN_REQUEST_URL&audience=deployer with the
// request token as bearer; the actor claim is who runs the job, whatever
// GITHUB_ACTOR says.
func TestVouchedActorReadsTheOIDCTokensActorClaim(t *testing.T) {
	claims := map[string]any{"actor": "octocat", "repository": "acme/infra", "run_id": "99", "aud": "deployer",
		"iss": "https://token.actions.githubusercontent.com"}
	var gotAuth, gotAudience string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotAudience = r.Header.Get("Authorization"), r.URL.Query().Get("audience")
		_ = json.NewEncoder(w).Encode(map[string]string{"value": fakeJWT(t, claims)})
	}))
	defer srv.Close()
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_ACTOR": "admin", "GITHUB_REPOSITORY": "acme/infra", "GITHUB_RUN_ID": "99",
		"ACTIONS_ID_TOKEN_REQUEST_URL": srv.URL + "/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "req-token"}
	id, err := VouchedActor(context.Background(), srv.Client(), envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if id.Login != "octocat" || !id.Verified || !strings.Contains(id.Source, "OIDC token") {
		t.Errorf("identity %+v", id)
	}
	if gotAuth != "Bearer req-token" || gotAudience != OIDCAudience {
		t.Errorf("token request: Authorization %q, audience %q", gotAuth, gotAudience)
	}

	// A token of another repository or run, or for another audience, is refused.
	for name, change := range map[string][2]string{"repository": {"repository", "evil/repo"}, "run": {"run_id", "7"}, "audience": {"aud", "sts.amazonaws.com"}} {
		claims[change[0]] = change[1]
		if _, err := VouchedActor(context.Background(), srv.Client(), envOf(env)); err == nil || !strings.Contains(err.Error(), change[1]) {
			t.Errorf("%s %s: %v", name, change[1], err)
		}
		claims = map[string]any{"actor": "octocat", "repository": "acme/infra", "run_id": "99", "aud": "deployer"}
	}
}

// Without the OIDC variables (no permissions: id-token: write), the run's
// triggering actor is read from the API with the job's token.
func TestVouchedActorReadsTheRunsTriggeringActorFromTheAPI(t *testing.T) {
	var gotPath, gotAuth string
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotAuth = r.URL.Path, r.Header.Get("Authorization")
		w.WriteHeader(status)
		if status != http.StatusOK {
			_, _ = w.Write([]byte(`{"message":"Resource not accessible by integration"}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":99,"actor":{"login":"hubot"},"triggering_actor":{"login":"octocat"}}`))
	}))
	defer srv.Close()
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_ACTOR": "admin", "GITHUB_REPOSITORY": "acme/infra", "GITHUB_RUN_ID": "99",
		"GITHUB_API_URL": srv.URL, "GITHUB_TOKEN": "ghs_job"}
	id, err := VouchedActor(context.Background(), srv.Client(), envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if id.Login != "octocat" || !id.Verified || !strings.Contains(id.Source, "triggering_actor of workflow run 99") {
		t.Errorf("identity %+v", id)
	}
	if gotPath != "/repos/acme/infra/actions/runs/99" || gotAuth != "Bearer ghs_job" {
		t.Errorf("request %s with %q", gotPath, gotAuth)
	}

	status = http.StatusForbidden
	if _, err := VouchedActor(context.Background(), srv.Client(), envOf(env)); err == nil || !strings.Contains(err.Error(), "actions: read") {
		t.Errorf("a token that may not read the run: %v", err)
	}
	delete(env, "GITHUB_TOKEN")
	_, err = VouchedActor(context.Background(), srv.Client(), envOf(env))
	if err == nil || !strings.Contains(err.Error(), "id-token: write") || !strings.Contains(err.Error(), "GITHUB_ACTOR") {
		t.Errorf("neither the OIDC token nor GITHUB_TOKEN: %v", err)
	}
}

// On a re-run the OIDC token's actor is who started the first attempt:
// who re-ran it is read from the API, and without a job token the
// override cannot be verified.
func TestVouchedActorOfAReRunIsTheTriggeringActor(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			_ = json.NewEncoder(w).Encode(map[string]string{"value": fakeJWT(t, map[string]any{"actor": "octocat", "repository": "acme/infra",
				"run_id": "99", "run_attempt": "2", "aud": "deployer"})})
			return
		}
		_, _ = w.Write([]byte(`{"id":99,"actor":{"login":"octocat"},"triggering_actor":{"login":"mallory"}}`))
	}))
	defer srv.Close()
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/infra", "GITHUB_RUN_ID": "99", "GITHUB_API_URL": srv.URL,
		"GITHUB_TOKEN": "ghs_job", "ACTIONS_ID_TOKEN_REQUEST_URL": srv.URL + "/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "req-token"}
	id, err := VouchedActor(context.Background(), srv.Client(), envOf(env))
	if err != nil || id.Login != "mallory" {
		t.Errorf("re-run: %+v, %v", id, err)
	}
	delete(env, "GITHUB_TOKEN")
	if _, err := VouchedActor(context.Background(), srv.Client(), envOf(env)); err == nil || !strings.Contains(err.Error(), "attempt 2") {
		t.Errorf("re-run without a job token: %v", err)
	}
}

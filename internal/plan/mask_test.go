package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsSecretKey(t *testing.T) {
	for _, k := range []string{"password", "db_password", "DB_PASSWORD", "apiKey", "APIKey", "api_key", "key", "ssh-keys", "clientSecret", "GITHUB_TOKEN", "accessToken", "passphrase", "credentials", "db_pass", "pwd"} {
		if !IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = false, want true", k)
		}
	}
	for _, k := range []string{"name", "monkey", "keyspace", "image", "passenger", "replicas", "tag", "hotkeyboard"} {
		if IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = true, want false", k)
		}
	}
}

func TestMaskAndUnwrap(t *testing.T) {
	in := map[string]any{
		"name":     "users",
		"password": "hunter2",
		"db":       map[string]any{"apiKey": "k", "host": "h", "empty_token": nil},
		"master":   map[string]any{"secret": true, "value": "s"},
		"list":     []any{map[string]any{"secret": true, "value": 42}, "plain"},
		"tokens":   []any{"a", "b"},
	}
	wantMasked := map[string]any{
		"name":     "users",
		"password": Masked,
		"db":       map[string]any{"apiKey": Masked, "host": "h", "empty_token": nil},
		"master":   Masked,
		"list":     []any{Masked, "plain"},
		"tokens":   Masked,
	}
	if diff := cmp.Diff(wantMasked, Mask(in)); diff != "" {
		t.Errorf("Mask (-want +got):\n%s", diff)
	}
	wantUnwrapped := map[string]any{
		"name":     "users",
		"password": "hunter2",
		"db":       map[string]any{"apiKey": "k", "host": "h", "empty_token": nil},
		"master":   "s",
		"list":     []any{42, "plain"},
		"tokens":   []any{"a", "b"},
	}
	if diff := cmp.Diff(wantUnwrapped, Unwrap(in)); diff != "" {
		t.Errorf("Unwrap (-want +got):\n%s", diff)
	}
	if in["master"].(map[string]any)["value"] != "s" || in["password"] != "hunter2" {
		t.Errorf("Mask or Unwrap changed its argument")
	}
	// {secret: false, ...} and maps with more keys are ordinary maps.
	other := map[string]any{"secret": false, "value": "v"}
	if diff := cmp.Diff(other, Unwrap(other)); diff != "" {
		t.Errorf("Unwrap of secret: false (-want +got):\n%s", diff)
	}
}

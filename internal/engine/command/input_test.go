package command

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{
		"user-service/api": "USER_SERVICE_API",
		"aws:region":       "AWS_REGION",
		"minReplicas":      "MINREPLICAS",
		"db.password":      "DB_PASSWORD",
	} {
		if got := envName(in); got != want {
			t.Errorf("envName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnwrapRemovesSecretWrappersAtAnyDepth(t *testing.T) {
	in := map[string]any{
		"db":    map[string]any{"password": map[string]any{"secret": true, "value": "p"}},
		"list":  []any{map[string]any{"secret": true, "value": 1}},
		"plain": map[string]any{"secret": false, "value": "kept"},
	}
	want := map[string]any{
		"db":    map[string]any{"password": "p"},
		"list":  []any{1},
		"plain": map[string]any{"secret": false, "value": "kept"},
	}
	if d := cmp.Diff(want, unwrapMap(in)); d != "" {
		t.Errorf("unwrapMap (-want +got):\n%s", d)
	}
	if _, ok := in["db"].(map[string]any)["password"].(map[string]any); !ok {
		t.Error("unwrapMap modified its input")
	}
}

func TestEnvironDropsInheritedDeployerVariables(t *testing.T) {
	p := payload{Stack: "s", Config: map[string]any{"a": nil}}
	env := p.environ([]string{"HOME=/h", "DEPLOYER_OUTPUT_OLD=x", "DEPLOYER_DEP_X_Y_Z=1", "DEPLOYER_LOCK=keep"}, "/tmp/o")
	got := map[string]bool{}
	for _, kv := range env {
		got[kv] = true
	}
	for _, kv := range []string{"HOME=/h", "DEPLOYER_LOCK=keep", "DEPLOYER_STACK=s", "DEPLOYER_CONFIG_A=", "DEPLOYER_OUTPUTS=/tmp/o"} {
		if !got[kv] {
			t.Errorf("environment lacks %s: %v", kv, env)
		}
	}
	for _, kv := range []string{"DEPLOYER_OUTPUT_OLD=x", "DEPLOYER_DEP_X_Y_Z=1"} {
		if got[kv] {
			t.Errorf("inherited %s leaked into the command", kv)
		}
	}
}

package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/deploytest"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// policyCheck is the PolicyCheck of a deploy with rego (one file).
func policyCheck(t *testing.T, rego string) *PolicyCheck {
	t.Helper()
	return &PolicyCheck{Dirs: []string{deploytest.PolicyDir(t, rego)}}
}

// A deploy with policies plans and checks them before any engine's
// preflight: a denied plan runs no engine and takes no lock; an allowed
// one goes on to the preflight, still before the lock.
func TestPolicyIsCheckedBeforeTheEnginesPreflight(t *testing.T) {
	missing := errors.New("the Pulumi CLI is not installed: pass --install-pulumi")
	for _, tt := range []struct {
		name    string
		stacks  string
		want    []string
		wantErr func(error) bool
	}{
		{name: "denied", stacks: `{"shop"}`, want: nil, wantErr: func(err error) bool {
			var d *policy.DeniedError
			return errors.As(err, &d)
		}},
		{name: "allowed", stacks: `{"other"}`, want: []string{"preflight pul a/stack"}, wantErr: func(err error) bool { return errors.Is(err, missing) }},
		// The use case loads and compiles the policy files: one that does
		// not compile stops the deploy, named with its line, before any
		// engine, lock or state.
		{name: "does not compile", stacks: `{"shop"`, want: nil, wantErr: func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "p.rego:")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "deployer.yaml")
			y := "stack: shop\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\nservices:\n" +
				"  a:\n    components:\n      api: {kind: Command, command: {create: \"true\"}}\n      stack: {kind: PulumiResource}\n"
			if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			back := filepath.Join(dir, ".deployer")
			sb, err := filestate.New(back)
			if err != nil {
				t.Fatal(err)
			}
			lb, err := filelock.New(back)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = lb.Close() })
			locks := lockmgr.NewManager(lb, lockmgr.Options{})
			var events []string
			svc := New(Deps{Deps: core.Deps{Store: statestore.New(sb), Locks: locks, Getenv: func(string) string { return "" }}, Engines: []engine.Engine{
				checkEngine{name: "pul", kinds: []string{"PulumiResource"}, events: &events, err: missing},
				checkEngine{name: "cmd", kinds: []string{"Command"}, events: &events},
			}})
			out, err := svc.Apply(context.Background(), ApplyRequest{Config: cfg, Target: Target{Stack: "shop", Env: "dev"},
				Policy: policyCheck(t, fmt.Sprintf(deploytest.DenyStacks, tt.stacks))})
			if !tt.wantErr(err) {
				t.Fatalf("error %v", err)
			}
			if !slices.Equal(events, tt.want) {
				t.Errorf("engine events %q, want %q", events, tt.want)
			}
			if tt.name == "denied" && (out == nil || out.Plan == nil || out.Plan.Policy == nil) {
				t.Errorf("a denied deploy returns the plan with its policy results: %+v", out)
			}
			if recs, err := locks.List(context.Background(), ""); err != nil || len(recs) != 0 {
				t.Errorf("locks %+v, %v: want none taken", recs, err)
			}
		})
	}
}

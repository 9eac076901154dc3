package deploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// checkEngine records its preflight calls (with the components it was
// given) in events, and fails them with err.
type checkEngine struct {
	engine.Engine // nil: only Name, Kinds, Handles and Preflight are called
	name          string
	kinds         []string
	events        *[]string
	err           error
}

func (e checkEngine) Name() string             { return e.name }
func (e checkEngine) Handles(kind string) bool { return slices.Contains(e.kinds, kind) }
func (e checkEngine) Kinds() []engine.Kind {
	var out []engine.Kind
	for _, k := range e.kinds {
		out = append(out, engine.Kind{Name: k})
	}
	return out
}
func (e checkEngine) Preflight(_ context.Context, req engine.PreflightRequest) error {
	var addrs []string
	for _, s := range req.Components {
		addrs = append(addrs, s.Address)
	}
	*e.events = append(*e.events, "preflight "+e.name+" "+strings.Join(addrs, ","))
	return e.err
}

// preflightService is a Service on a two-service config (a/api and b/db
// run by the "cmd" engine, a/stack by "pul") whose backends are "opened"
// by recording it in events and failing with errBackend: every use case
// stops right after opening them.
func preflightService(t *testing.T, events *[]string, pulErr error) (*Service, *config.Config) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "deployer.yaml")
	y := "stack: shop\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\nservices:\n" +
		"  a:\n    components:\n      api: {kind: Command, command: {create: \"true\"}}\n      stack: {kind: PulumiResource}\n" +
		"  b:\n    components:\n      db: {kind: Command, command: {create: \"true\"}}\n"
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	svc := New(Deps{Deps: core.Deps{Open: func(context.Context) (*lockmgr.Manager, *statestore.Store, error) {
		*events = append(*events, "open")
		return nil, nil, errBackend
	}, Getenv: func(string) string { return "" }}, Engines: []engine.Engine{
		checkEngine{name: "pul", kinds: []string{"PulumiResource"}, events: events, err: pulErr},
		checkEngine{name: "cmd", kinds: []string{"Command"}, events: events},
	}})
	return svc, cfg
}

var errBackend = errors.New("backend unreachable")

// The deploy use case runs each engine's preflight, in the engines' order,
// on the components in scope, before it opens a backend or takes a lock;
// a failed preflight touches nothing.
func TestPreflightRunsBeforeAnyBackendIsOpened(t *testing.T) {
	missing := errors.New("the Pulumi CLI is not installed: pass --install-pulumi")
	tests := []struct {
		name    string
		target  Target
		pulErr  error
		run     func(context.Context, *Service, *config.Config, Target) error
		want    []string
		wantErr error
	}{
		{name: "deploy", target: Target{Stack: "shop", Env: "dev"},
			run:  apply,
			want: []string{"preflight pul a/stack", "preflight cmd a/api,b/db", "open"}, wantErr: errBackend},
		{name: "deploy: a failed preflight opens nothing", target: Target{Stack: "shop", Env: "dev"}, pulErr: missing,
			run:  apply,
			want: []string{"preflight pul a/stack"}, wantErr: missing},
		{name: "deploy --component: only the engines of the scope", target: Target{Stack: "shop", Env: "dev", Service: "b", Component: "db"},
			run:  apply,
			want: []string{"preflight cmd b/db", "open"}, wantErr: errBackend},
		{name: "plan runs no preflight", target: Target{Stack: "shop", Env: "dev"}, pulErr: missing,
			run: func(ctx context.Context, s *Service, cfg *config.Config, t Target) error {
				_, err := s.Plan(ctx, PlanRequest{Config: cfg, Target: t})
				return err
			},
			want: []string{"open"}, wantErr: errBackend},
		{name: "plan --refresh: preflight first", target: Target{Stack: "shop", Env: "dev", Service: "a"}, pulErr: missing,
			run: func(ctx context.Context, s *Service, cfg *config.Config, t Target) error {
				_, err := s.Plan(ctx, PlanRequest{Config: cfg, Target: t, CheckEngines: true})
				return err
			},
			want: []string{"preflight pul a/stack"}, wantErr: missing},
		{name: "refresh after a checked plan: one preflight", target: Target{Stack: "shop", Env: "dev"},
			run: func(ctx context.Context, s *Service, cfg *config.Config, t Target) error {
				if _, err := s.Plan(ctx, PlanRequest{Config: cfg, Target: t, CheckEngines: true}); !errors.Is(err, errBackend) {
					return err
				}
				_, err := s.Refresh(ctx, RefreshRequest{Config: cfg, Target: t, Plan: &plan.Plan{}})
				return err
			},
			want: []string{"preflight pul a/stack", "preflight cmd a/api,b/db", "open"}, wantErr: errBackend},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []string
			svc, cfg := preflightService(t, &events, tt.pulErr)
			err := tt.run(context.Background(), svc, cfg, tt.target)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(events, tt.want) {
				t.Errorf("events %q, want %q", events, tt.want)
			}
		})
	}
}

func apply(ctx context.Context, s *Service, cfg *config.Config, t Target) error {
	_, err := s.Apply(ctx, ApplyRequest{Config: cfg, Target: t})
	return err
}

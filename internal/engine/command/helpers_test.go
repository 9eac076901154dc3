package command

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// syncBuffer is a progress writer safe for concurrent use; it signals on
// notify the first time a written chunk contains watch.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	watch  string
	notify chan struct{}
	once   sync.Once
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch != "" && bytes.Contains(p, []byte(s.watch)) {
		s.once.Do(func() { close(s.notify) })
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func watching(line string) *syncBuffer {
	return &syncBuffer{watch: line, notify: make(chan struct{})}
}

// step builds a Command step for address "svc/name".
func step(addr string, action plan.Action, spec Spec, cfg map[string]any, deps ...string) plan.Step {
	svc, comp, _ := strings.Cut(addr, "/")
	return plan.Step{
		Address: addr, Service: svc, Component: comp, Kind: Kind, Action: action,
		Config: cfg, Settings: map[string]map[string]any{Section: spec.Fields()}, DependsOn: deps,
	}
}

func inputs(t *testing.T, progress *syncBuffer) engine.Inputs {
	t.Helper()
	return engine.Inputs{
		Stack: "quickstart", Env: "dev", Dir: t.TempDir(), DeploymentID: "dep-test",
		Outputs: map[string]map[string]any{}, Progress: progress,
	}
}

// testEngine has a short grace period and a clean base environment.
func testEngine() *Engine {
	return New(WithGrace(200*time.Millisecond), WithEnviron(func() []string {
		return []string{"PATH=" + os.Getenv("PATH"), "DEPLOYER_CONFIG_STALE=leak"}
	}))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func join(dir, name string) string { return filepath.Join(dir, name) }

// apply, destroy and refresh make one call of e's contract with steps and in.
func apply(e engine.Engine, ctx context.Context, steps []plan.Step, in engine.Inputs) ([]engine.Result, error) {
	resp, err := e.Apply(ctx, engine.ApplyRequest{Steps: steps, Inputs: in})
	return resp.Results, err
}

func destroy(e engine.Engine, ctx context.Context, steps []plan.Step, in engine.Inputs) ([]engine.Result, error) {
	resp, err := e.Destroy(ctx, engine.DestroyRequest{Steps: steps, Inputs: in})
	return resp.Results, err
}

func refresh(e engine.Engine, ctx context.Context, steps []plan.Step, in engine.Inputs) ([]engine.Drift, error) {
	resp, err := e.Refresh(ctx, engine.RefreshRequest{Steps: steps, Inputs: in})
	return resp.Drift, err
}

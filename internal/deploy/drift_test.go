package deploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

func TestMaskDriftLeavesNoSecret(t *testing.T) {
	drift := []engine.Drift{{
		Address:     "app/db",
		ActualState: map[string]any{"endpoint": "db.internal", "master_password": "hunter2", "token": map[string]any{"secret": true, "value": "tok-1"}},
		Fields: []plan.FieldDiff{
			{Path: "outputs.master_password", Old: "hunter2", New: "hunter3", Op: "change"},
			{Path: "outputs.replicas", Old: 2, New: 3, Op: "change"},
			{Path: "outputs.token", Old: map[string]any{"secret": true, "value": "tok-1"}, New: "tok-2", Op: "change"},
		},
	}}
	maskDrift(drift)
	want := []engine.Drift{{
		Address:     "app/db",
		ActualState: map[string]any{"endpoint": "db.internal", "master_password": plan.Masked, "token": plan.Masked},
		Fields: []plan.FieldDiff{
			{Path: "outputs.master_password", Old: plan.Masked, New: plan.Masked, Op: "change", Sensitive: true},
			{Path: "outputs.replicas", Old: 2, New: 3, Op: "change"},
			{Path: "outputs.token", Old: plan.Masked, New: plan.Masked, Op: "change", Sensitive: true},
		},
	}}
	if diff := cmp.Diff(want, drift); diff != "" {
		t.Errorf("masked drift (-want +got):\n%s", diff)
	}
}

// coverEngine declares, in its catalog, which of its kinds its Preview and
// Refresh cover, and covers nothing in the plans it is given
// (engine.ErrNotSupported) unless previews is set.
type coverEngine struct {
	engine.Engine // nil: only Name, Kinds, Handles, Preflight, Preview and Refresh are called
	kinds         []engine.Kind
	previews      string
}

func (e coverEngine) Name() string         { return "cover" }
func (e coverEngine) Kinds() []engine.Kind { return e.kinds }
func (e coverEngine) Handles(kind string) bool {
	return slices.ContainsFunc(e.kinds, func(k engine.Kind) bool { return k.Name == kind })
}
func (coverEngine) Preflight(context.Context, engine.PreflightRequest) error { return nil }
func (e coverEngine) Preview(context.Context, engine.PreviewRequest) (engine.PreviewResponse, error) {
	if e.previews == "" {
		return engine.PreviewResponse{}, engine.ErrNotSupported
	}
	return engine.PreviewResponse{Text: e.previews}, nil
}
func (coverEngine) Refresh(context.Context, engine.RefreshRequest) (engine.RefreshResponse, error) {
	return engine.RefreshResponse{}, engine.ErrNotSupported
}

// When nothing in scope can be previewed or refreshed, the error says which
// components can be, as the engines given declare it: kinds covered alike
// together, in the engines' order, with what narrows them; no engine or
// kind is known to the use case itself.
func TestNothingToPreviewOrRefreshNamesWhatTheEnginesCover(t *testing.T) {
	every := engine.Coverage{Covered: true}
	lake := coverEngine{kinds: []engine.Kind{
		{Name: "Alpha", Preview: every, Refresh: every},
		{Name: "Beta", Refresh: engine.Coverage{Covered: true, When: "with beta.read (docs/beta.md#read)"}},
	}}
	sea := coverEngine{kinds: []engine.Kind{{Name: "Gamma", Preview: every, Refresh: every}, {Name: "Delta"}}}
	bare := coverEngine{kinds: []engine.Kind{{Name: "Alpha"}, {Name: "Delta"}}}
	tests := []struct {
		name             string
		engines          []engine.Engine
		preview, refresh string
	}{
		{name: "two engines", engines: []engine.Engine{lake, sea},
			preview: "nothing in scope can be previewed: --preview applies to Alpha or Gamma components",
			refresh: "nothing in scope can be refreshed: --refresh applies to Alpha or Gamma components and to Beta components " +
				"with beta.read (docs/beta.md#read); deploy first if the components have no state yet"},
		{name: "the engines' order", engines: []engine.Engine{sea, lake},
			preview: "nothing in scope can be previewed: --preview applies to Gamma or Alpha components",
			refresh: "nothing in scope can be refreshed: --refresh applies to Gamma or Alpha components and to Beta components " +
				"with beta.read (docs/beta.md#read); deploy first if the components have no state yet"},
		{name: "no engine covers anything", engines: []engine.Engine{bare},
			preview: "nothing in scope can be previewed: no engine in use supports --preview",
			refresh: "nothing in scope can be refreshed: no engine in use supports --refresh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, cfg := coverService(t, tt.engines)
			p := &plan.Plan{Steps: []plan.Step{{Address: "app/x", Kind: "Alpha"}, {Address: "app/y", Kind: "Delta"}}}
			tg := Target{Stack: "shop", Env: "dev"}
			_, err := svc.Preview(context.Background(), PreviewRequest{Config: cfg, Target: tg, Plan: p})
			if !errors.Is(err, ErrNothingToPreview) || err.Error() != tt.preview {
				t.Errorf("preview:\n got %v\nwant %s (wrapping ErrNothingToPreview)", err, tt.preview)
			}
			_, err = svc.Refresh(context.Background(), RefreshRequest{Config: cfg, Target: tg, Plan: p})
			if !errors.Is(err, ErrNothingToRefresh) || err.Error() != tt.refresh {
				t.Errorf("refresh:\n got %v\nwant %s (wrapping ErrNothingToRefresh)", err, tt.refresh)
			}
		})
	}
}

// Engines that preview something in scope give their previews, in the
// engines' order, a blank line between them; one that covers nothing in
// scope is left out.
func TestPreviewJoinsTheEnginesThatCoverTheScope(t *testing.T) {
	every := engine.Coverage{Covered: true}
	one := coverEngine{kinds: []engine.Kind{{Name: "Alpha", Preview: every}}, previews: "One preview:\n~ app/x\n"}
	none := coverEngine{kinds: []engine.Kind{{Name: "Beta"}}}
	two := coverEngine{kinds: []engine.Kind{{Name: "Delta", Preview: every}}, previews: "Two preview:\n+ app/y\n"}
	svc, cfg := coverService(t, []engine.Engine{one, none, two})
	p := &plan.Plan{Steps: []plan.Step{{Address: "app/x", Kind: "Alpha"}, {Address: "app/y", Kind: "Delta"}, {Address: "app/z", Kind: "Beta"}}}
	out, err := svc.Preview(context.Background(), PreviewRequest{Config: cfg, Target: Target{Stack: "shop", Env: "dev"}, Plan: p})
	if want := "One preview:\n~ app/x\n\nTwo preview:\n+ app/y\n"; err != nil || out != want {
		t.Errorf("preview %q, %v; want %q", out, err, want)
	}
}

// coverService is a Service over engines and a file state store in a temp
// dir, on a config whose one service app has components x (Alpha) and y
// (Delta).
func coverService(t *testing.T, engines []engine.Engine) (*Service, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "deployer.yaml")
	y := "stack: shop\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\nservices:\n" +
		"  app:\n    components:\n      x: {kind: Alpha}\n      y: {kind: Delta}\n"
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := filestate.New(filepath.Join(dir, ".deployer"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return New(Deps{Deps: core.Deps{Store: statestore.New(sb), Getenv: func(string) string { return "" }}, Engines: engines}), cfg
}

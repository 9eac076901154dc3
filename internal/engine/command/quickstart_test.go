package command

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// quickstartSteps reads examples/quickstart/deployer.yaml (copied to dir) and
// returns its components for env as steps of action, in dependency order. It
// stands in for config+plan so the example is exercised by this engine alone.
func quickstartSteps(t *testing.T, dir, env string, action plan.Action) ([]plan.Step, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "deployer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(b, "examples/quickstart/deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]plan.Step{}
	for svc, s := range cfg.Services {
		for name, c := range s.Components {
			conf := maps.Clone(c.Config)
			maps.Copy(conf, c.Environments[env]) // the example only overrides top-level keys
			var deps []string
			for _, d := range c.DependsOn {
				if !strings.Contains(d, "/") {
					d = svc + "/" + d
				}
				deps = append(deps, d)
			}
			st := step(svc+"/"+name, action, *SpecFrom(c.Settings[Section]), conf, deps...)
			st.Kind = c.Kind
			all[st.Address] = st
		}
	}
	var order []plan.Step
	done := map[string]bool{}
	var visit func(addr string)
	visit = func(addr string) {
		if done[addr] {
			return
		}
		done[addr] = true
		st, ok := all[addr]
		if !ok {
			t.Fatalf("depends_on names unknown component %s", addr)
		}
		for _, d := range st.DependsOn {
			visit(d)
		}
		order = append(order, st)
	}
	for _, addr := range slices.Sorted(maps.Keys(all)) {
		visit(addr)
	}
	return order, cfg.Environments[env].Config
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "out" || rel == ".deployer" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestQuickstartExample deploys examples/quickstart with this engine: every
// component in dependency order, again as an update (same results), then a
// one-component update of docs/publish's channel, then a destroy.
func TestQuickstartExample(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, "../../../examples/quickstart", dir)
	e := New(WithEnviron(func() []string { return []string{"PATH=" + os.Getenv("PATH")} }))
	progress := &syncBuffer{}
	in := engine.Inputs{Stack: "quickstart", Env: "prod", Dir: dir, Outputs: map[string]map[string]any{}, Progress: progress}

	steps, envConfig := quickstartSteps(t, dir, "prod", plan.Create)
	in.EnvConfig = envConfig
	if len(steps) < 5 {
		t.Fatalf("quickstart has %d components, want at least 5", len(steps))
	}
	first, err := apply(e, context.Background(), steps, in)
	if err != nil {
		t.Fatalf("create: %v\nprogress:\n%s", err, progress)
	}
	page := readFile(t, filepath.Join(dir, "out/prod/published/stable/index.html"))
	for _, s := range []string{"Hello service (production)", "<code>1.0.0</code>", "quickstart.test"} {
		if !strings.Contains(page, s) {
			t.Errorf("published page lacks %q:\n%s", s, page)
		}
	}
	if conf := readFile(t, filepath.Join(dir, "out/prod/config/app.conf")); !strings.Contains(conf, "log_level = warn") {
		t.Errorf("prod override of log_level not rendered:\n%s", conf)
	}

	updates, _ := quickstartSteps(t, dir, "prod", plan.Update)
	again, err := apply(e, context.Background(), updates, in)
	if err != nil {
		t.Fatalf("update: %v\nprogress:\n%s", err, progress)
	}
	for i := range first {
		if d := cmp.Diff(first[i].Outputs, again[i].Outputs); d != "" {
			t.Errorf("%s: re-run changed outputs (-first +again):\n%s", first[i].Address, d)
		}
	}

	var publish plan.Step
	for _, st := range updates {
		if st.Address == "docs/publish" {
			publish = st
		}
	}
	publish.Config = map[string]any{"channel": "canary"}
	if _, err := apply(e, context.Background(), []plan.Step{publish}, in); err != nil {
		t.Fatalf("update docs/publish: %v\nprogress:\n%s", err, progress)
	}
	if exists(filepath.Join(dir, "out/prod/published/stable")) || !exists(filepath.Join(dir, "out/prod/published/canary/index.html")) {
		t.Error("changing docs/publish's channel did not move the published site")
	}

	slices.Reverse(updates)
	if _, err := destroy(e, context.Background(), updates, in); err != nil {
		t.Fatalf("destroy: %v\nprogress:\n%s", err, progress)
	}
	t.Logf("progress:\n%s", progress)
	if exists(filepath.Join(dir, "out/prod")) {
		t.Errorf("destroy left out/prod behind\nprogress:\n%s", progress)
	}
}

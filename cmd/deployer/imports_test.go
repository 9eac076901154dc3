package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The package map of docs/design.md#package-map, as rules on imports:
//
//	cmd/deployer -> cli -> app -> stacks/runner -> {deploy, deploy/stateops} -> deploy/core -> executor
//	  -> {lockmgr, statestore, plan, engine, config} -> backends
//	cli -> {metrics, ghactions, planview, webui, termui} -> {stacks/runner, deploy, deploy/stateops} (renderers of the use cases' results)
//
// A lock or state backend implements a core interface and imports no other
// backend; an engine imports no other engine; nothing below the CLI imports
// cli, deploy or the backend registry; deploy and cli import no backend and
// no engine package (cmd/deployer and internal/backends wire them in).

const module = "github.com/deployer-dev/deployer/"

// role is the place of a package on the map.
type role string

const (
	roleCmd      role = "cmd"      // cmd/...: wiring, may import anything
	roleCLI      role = "cli"      // internal/cli
	roleApp      role = "app"      // internal/app: the wiring behind the Factory
	roleRunner   role = "runner"   // internal/stacks/runner: the use cases over many stacks
	roleDeploy   role = "deploy"   // internal/deploy, internal/deploy/stateops: the use cases
	roleUseCore  role = "usecore"  // internal/deploy/core: target, lease, load, save, which the use cases stand on
	roleExecutor role = "executor" // internal/executor: applies a plan's steps with the engines, for the use cases
	roleRegistry role = "registry" // internal/backends: URL -> backend package; internal/engines: the engines
	roleRenderer role = "renderer" // internal/{metrics,ghactions,planview,webui,termui}: render the use cases' results (metrics, GitHub, plans, the web view, the terminal)
	roleBackend  role = "backend"  // internal/lockmgr/<x>, internal/statestore/<x>
	roleEngine   role = "engine"   // internal/engine/<x> (and the Pulumi engine's old home)
	roleSupport  role = "support"  // conformance suites and test servers
	roleCore     role = "core"     // lockmgr, statestore, plan, engine, config and shared helpers
)

func roleOf(pkg string) role {
	switch {
	case strings.HasPrefix(pkg, "cmd/"):
		return roleCmd
	case pkg == "internal/cli" || strings.HasPrefix(pkg, "internal/cli/"):
		return roleCLI
	case pkg == "internal/app":
		return roleApp
	case pkg == "internal/stacks/runner":
		return roleRunner
	case pkg == "internal/deploy", pkg == "internal/deploy/stateops":
		return roleDeploy
	case pkg == "internal/deploy/core":
		return roleUseCore
	case pkg == "internal/executor":
		return roleExecutor
	case pkg == "internal/backends", pkg == "internal/engines":
		return roleRegistry
	case pkg == "internal/metrics", pkg == "internal/ghactions", pkg == "internal/planview", pkg == "internal/webui", pkg == "internal/termui":
		return roleRenderer
	case slices.Contains([]string{"internal/lockmgr/locktest", "internal/statestore/storetest",
		"internal/awsbackend/awstest", "internal/pgschema/pgschematest", "internal/testenv", "internal/faulttest", "internal/engine/enginetest",
		"internal/deploy/deploytest", "internal/e2e"}, pkg):
		return roleSupport
	case strings.HasPrefix(pkg, "internal/lockmgr/"), strings.HasPrefix(pkg, "internal/statestore/"):
		return roleBackend
	case strings.HasPrefix(pkg, "internal/engine/"):
		return roleEngine
	}
	return roleCore
}

// rule returns why from may not import to, or "" when it may.
func rule(from, to string) string {
	rf, rt := roleOf(from), roleOf(to)
	wires := rf == roleCLI || rf == roleApp // the CLI and its wiring
	switch {
	case rf == roleCmd:
		return ""
	case rt == roleCLI || rt == roleCmd:
		return "only cmd/deployer imports the CLI"
	case rt == roleApp && rf != roleCLI:
		return "only the CLI (and cmd/deployer) imports the wiring behind the Factory"
	case rt == roleRunner && !wires && rf != roleRenderer:
		return "only the CLI (and cmd/deployer) and the renderers of its results run many stacks"
	case rt == roleDeploy && !wires && rf != roleRenderer && rf != roleRunner:
		return "only the CLI (and cmd/deployer), the many-stacks runner and the renderers of their results (metrics, GitHub, plans) import the use cases"
	case rf == roleDeploy && rt == roleDeploy && from != to:
		return "the use cases stand side by side on their core: neither imports the other"
	case rt == roleUseCore && rf != roleDeploy && !wires && rf != roleRenderer && rf != roleRunner:
		return "only the use cases (and the CLI, the runner and the renderers) stand on the use cases' core"
	case rt == roleExecutor && rf != roleDeploy && rf != roleUseCore:
		return "only the use cases drive the executor: it is given a plan, it does not choose one"
	case to == "internal/metrics" && !wires:
		return "only the CLI (and cmd/deployer) wires the metrics recorder"
	case rt == roleRenderer && !wires && rf != roleRenderer:
		return "only the CLI (and cmd/deployer) and other renderers use the renderers"
	case rt == roleRegistry && !wires:
		return "only the CLI (and cmd/deployer) opens backends through the registry"
	case rf == roleBackend && rt == roleBackend:
		return "no backend imports another backend"
	case rf == roleEngine && rt == roleEngine:
		return "no engine imports another engine"
	case (rf == roleDeploy || wires || rf == roleRunner || rf == roleExecutor || rf == roleUseCore) && (rt == roleBackend || rt == roleEngine):
		return "deploy and cli reach backends and engines through their interfaces, never a concrete package"
	case rf == roleCore && (rt == roleBackend || rt == roleEngine || rt == roleSupport):
		return "core packages are implemented by backends and engines, they do not import them"
	case rf != roleSupport && rt == roleSupport:
		return "test support is imported by tests only"
	}
	return ""
}

// knownExceptions are imports that break a rule today, each with what
// removes it. A listed import that is gone fails the test, so the list
// stays true. None today.
var knownExceptions = map[string]string{}

func TestPackageImportsFollowTheMap(t *testing.T) {
	imports := packageImports(t, filepath.Join("..", ".."))
	if len(imports) < 10 {
		t.Fatalf("found %d packages: the walk did not find the source tree", len(imports))
	}
	used := map[string]bool{}
	for _, from := range sortedKeys(imports) {
		for _, to := range imports[from] {
			why := rule(from, to)
			if why == "" {
				continue
			}
			edge := from + " -> " + to
			if _, ok := knownExceptions[edge]; ok {
				used[edge] = true
				continue
			}
			t.Errorf("%s: %s (docs/design.md#package-map)", edge, why)
		}
	}
	for edge, reason := range knownExceptions {
		if !used[edge] {
			t.Errorf("known exception %q (%s) no longer occurs: delete it", edge, reason)
		}
	}
}

// TestRulesMatchTheMap pins the rules on a few edges, so a change to rule
// that loosens the map fails here.
func TestRulesMatchTheMap(t *testing.T) {
	for _, c := range []struct {
		from, to string
		allowed  bool
	}{
		{"cmd/deployer", "internal/engine/pulumi", true},
		{"internal/cli", "internal/deploy", true},
		{"internal/cli", "internal/backends", true},
		{"internal/cli", "internal/engines", true},
		{"internal/cli", "internal/app", true},
		{"internal/app", "internal/backends", true},
		{"internal/app", "internal/metrics", true},
		{"internal/app", "internal/termui", true},
		{"internal/app", "internal/cli", false},
		{"internal/app", "internal/statestore/file", false},
		{"internal/termui", "internal/app", false},
		{"internal/termui", "internal/cli", false},
		{"internal/deploy", "internal/app", false},
		{"internal/deploy", "internal/termui", false},
		{"internal/engines", "internal/engine/pulumi", true},
		{"internal/deploy", "internal/engines", false},
		{"internal/config", "internal/engines", false},
		{"internal/config", "internal/engine/command", false},
		{"internal/plan", "internal/engine/command", false},
		{"internal/plan", "internal/engine/pulumi", false},
		{"internal/deploy", "internal/engine/pulumi", false},
		{"internal/deploy", "internal/lockmgr", true},
		{"internal/deploy", "internal/engine", true},
		{"internal/lockmgr/s3", "internal/awsbackend", true},
		{"internal/lockmgr/locktest", "internal/lockmgr", true},
		{"internal/backends", "internal/statestore/postgres", true},
		{"internal/lockmgr/s3", "internal/statestore/s3", false},
		{"internal/statestore/file", "internal/lockmgr/file", false},
		{"internal/deploy", "internal/lockmgr/file", false},
		{"internal/deploy", "internal/engine/command", false},
		{"internal/deploy", "internal/backends", false},
		{"internal/cli", "internal/statestore/file", false},
		{"internal/cli", "internal/engine/pulumi", false},
		{"internal/engine/pulumi", "internal/engine/command", false},
		{"internal/statestore", "internal/statestore/file", false},
		{"internal/deploy", "internal/cli", false},
		{"internal/plan", "internal/deploy", false},
		{"internal/metrics", "internal/deploy", true},
		{"internal/stacks/runner", "internal/deploy", true},
		{"internal/deploy", "internal/stacks/runner", false},
		{"internal/stacks", "internal/stacks/runner", false},
		{"internal/cli", "internal/stacks/runner", true},
		{"internal/deploy", "internal/executor", true},
		{"internal/executor", "internal/deploy", false},
		{"internal/executor", "internal/engine", true},
		{"internal/executor", "internal/engine/command", false},
		{"internal/plan", "internal/executor", false},
		{"internal/deploy", "internal/deploy/core", true},
		{"internal/deploy/stateops", "internal/deploy/core", true},
		{"internal/deploy/stateops", "internal/deploy", false},
		{"internal/deploy", "internal/deploy/stateops", false},
		{"internal/deploy/core", "internal/deploy", false},
		{"internal/deploy/core", "internal/executor", true},
		{"internal/plan", "internal/deploy/core", false},
		{"internal/deploy/core", "internal/lockmgr/file", false},
		{"internal/deploy", "internal/metrics", false},
		{"internal/lockmgr", "internal/metrics", false},
		{"internal/ghactions", "internal/deploy", true},
		{"internal/ghactions", "internal/planview", true},
		{"internal/ghactions", "internal/metrics", false},
		{"internal/deploy", "internal/ghactions", false},
		{"internal/plan", "internal/planview", false},
		{"internal/lockmgr", "internal/lockmgr/locktest", false},
		{"internal/backends", "internal/config", true},
		{"internal/config", "internal/backends", false},
		{"internal/lockmgr/redis", "internal/backendurl", true},
		{"internal/lockmgr/dynamodb", "internal/awsbackend", true},
	} {
		if got := rule(c.from, c.to) == ""; got != c.allowed {
			t.Errorf("%s -> %s allowed = %v, want %v", c.from, c.to, got, c.allowed)
		}
	}
}

// packageImports returns, for each package under root/cmd and root/internal
// (module-relative path), the module packages its non-test files import.
func packageImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	forEachSource(t, root, []string{"cmd", "internal"}, func(path string) error {
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out[pkg], dep) {
				out[pkg] = append(out[pkg], dep)
			}
		}
		return nil
	})
	return out
}

// forEachSource calls fn with the path of every non-test Go file under
// root's folders tops (testdata and hidden folders left out); an error of
// fn or of the walk fails the test. A missing folder is passed over.
func forEachSource(t *testing.T, root string, tops []string, fn func(path string) error) {
	t.Helper()
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			return fn(path)
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package stacks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// repo is a directory of stacks for a test.
type repo struct {
	t    *testing.T
	root string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &repo{t: t, root: root}
}

func (r *repo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// stack writes dir/deployer.yaml for stack name reading the stacks refs
// ("net" or "net@prod").
func (r *repo) stack(dir, name string, refs ...string) {
	r.t.Helper()
	y := "stack: " + name + "\nenvironments:\n  dev: {}\n  prod: {}\nservices:\n  app:\n    components:\n      run:\n        kind: Command\n        command: {create: \"true\"}\n"
	for i, ref := range refs {
		stack, env, _ := strings.Cut(ref, "@")
		y += "      ref" + string(rune('a'+i)) + ":\n        kind: StackReference\n        config: {stack: " + stack
		if env != "" {
			y += ", environment: " + env
		}
		y += "}\n"
	}
	r.write(filepath.Join(dir, ConfigFile), y)
}

func (r *repo) discover(env string) (*Set, error) {
	return Discover(r.root, Options{Env: env, Load: func(p string) (*config.Config, error) { return config.Load(p) }})
}

func names(s *Set) []string {
	var out []string
	for _, st := range s.Stacks {
		out = append(out, st.Name)
	}
	return out
}

func TestDiscoverOrdersADiamondProducersFirst(t *testing.T) {
	r := newRepo(t)
	r.stack("leaf", "leaf", "left", "right")
	r.stack("root", "root")
	r.stack("sides/left", "left", "root")
	r.stack("sides/right", "right", "root")
	r.stack("alone", "alone", "outside")
	s, err := r.discover("dev")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(s), []string{"alone", "root", "left", "right", "leaf"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	if got := s.Producers("leaf"); !slices.Equal(got, []string{"left", "right"}) {
		t.Errorf("producers of leaf = %v", got)
	}
	if got := s.Consumers("root"); !slices.Equal(got, []string{"left", "right"}) {
		t.Errorf("consumers of root = %v", got)
	}
	alone := s.Get("alone")
	if alone.Dir != "alone" || len(alone.Refs) != 1 || !alone.Refs[0].External || alone.Refs[0].Component != "app/refa" {
		t.Errorf("alone = %+v: its reference to a stack not under the root should be external", alone)
	}
	down := s.Downstream([]string{"left"})
	if !down["left"] || !down["leaf"] || down["right"] || down["root"] || len(down) != 2 {
		t.Errorf("downstream of left = %v, want left and leaf", down)
	}
}

func TestDiscoverSkipsHiddenAndVendoredDirectories(t *testing.T) {
	r := newRepo(t)
	r.stack(".", "top")
	r.stack("net", "net")
	for _, d := range []string{".git/x", ".deployer/y", "node_modules/z", "net/vendor/w", ".terraform/v"} {
		r.stack(d, "skipped-"+strings.ReplaceAll(filepath.Base(d), ".", ""))
	}
	s, err := r.discover("")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(s); !slices.Equal(got, []string{"net", "top"}) {
		t.Fatalf("stacks = %v, want net and top only", got)
	}
	if s.Get("top").Dir != "." {
		t.Errorf("the root's own stack has Dir %q, want .", s.Get("top").Dir)
	}
}

func TestListFileIncludesAndExcludes(t *testing.T) {
	r := newRepo(t)
	r.stack("net", "net")
	r.stack("svc/a", "a")
	r.stack("svc/b", "b")
	r.stack("sandbox/c", "c")
	r.write(ListFile, "stacks: [net, \"svc/*\"]\nexclude: [svc/b]\n")
	s, err := r.discover("")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(s); !slices.Equal(got, []string{"a", "net"}) {
		t.Fatalf("stacks = %v, want a and net", got)
	}

	r.write(ListFile, "stacks: [netwrk]\n")
	if _, err := r.discover(""); err == nil || !strings.Contains(err.Error(), `"netwrk" matches no directory`) {
		t.Errorf("a listed path that matches nothing: err = %v", err)
	}
	r.write(ListFile, "stack: [net]\n")
	if _, err := r.discover(""); err == nil || !strings.Contains(err.Error(), ListFile) {
		t.Errorf("an unknown key: err = %v", err)
	}
	r.write(ListFile, "exclude: [sandbox]\n")
	s, err = r.discover("")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(s); !slices.Equal(got, []string{"a", "b", "net"}) {
		t.Fatalf("exclude of a directory drops what is below it: stacks = %v", got)
	}
}

func TestDiscoverRefusesDuplicatesNamelessStacksAndCycles(t *testing.T) {
	r := newRepo(t)
	r.stack("a", "same")
	r.stack("b", "same")
	if _, err := r.discover(""); err == nil || !strings.Contains(err.Error(), "stack same is declared twice") {
		t.Errorf("duplicate: err = %v", err)
	}

	r = newRepo(t)
	r.write("x/deployer.yaml", "environments: {dev: {}}\n")
	if _, err := r.discover(""); err == nil || !strings.Contains(err.Error(), "has no stack: name") {
		t.Errorf("no stack: err = %v", err)
	}

	r = newRepo(t)
	r.stack("a", "a", "c")
	r.stack("b", "b", "a")
	r.stack("c", "c", "b")
	r.stack("d", "d", "a")
	_, err := r.discover("dev")
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("cycle: err = %v, want *CycleError", err)
	}
	if got := strings.Join(ce.Cycle, " -> "); got != "a -> c -> b -> a" {
		t.Errorf("cycle = %s, want a -> c -> b -> a", got)
	}
	if !strings.Contains(err.Error(), "a reads c through app/refa in a/deployer.yaml") {
		t.Errorf("the error should name the reference: %v", err)
	}
}

func TestReferencesToAnotherEnvironmentAreNoEdge(t *testing.T) {
	r := newRepo(t)
	r.stack("a", "a", "b@prod")
	r.stack("b", "b", "a")
	if _, err := r.discover("dev"); err != nil {
		t.Fatalf("in dev, a reads prod's b: no cycle, got %v", err)
	}
	if _, err := r.discover("prod"); err == nil {
		t.Fatal("in prod, a and b read each other: want a cycle")
	}
	r.write("c/deployer.yaml", "stack: c\nenvironments: {qa: {}}\n")
	s, err := r.discover("dev")
	if err != nil {
		t.Fatal(err)
	}
	if s.Get("c").InEnv || !s.Get("a").InEnv {
		t.Errorf("InEnv: c (no dev) = %v, a = %v", s.Get("c").InEnv, s.Get("a").InEnv)
	}
}

func TestChangedSinceFindsOwnersAndReaders(t *testing.T) {
	_, err := exec.LookPath("git")
	testenv.RequirePlatform(t, err == nil, "git is not installed")
	r := newRepo(t)
	r.stack("net", "net")
	r.stack("net/inner", "inner")
	r.stack("db", "db", "net")
	r.stack("app", "app", "db")
	r.write("app/deployer.yaml", string(must(os.ReadFile(filepath.Join(r.root, "app/deployer.yaml"))))+
		"      cert:\n        kind: Command\n        command: {create: \"true\"}\n        config: {pem: \"${file:../common/cert.pem}\"}\n")
	r.write("common/cert.pem", "one")
	r.write("README.md", "hi")
	gitc := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", r.root, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitc("init", "-q", "-b", "main")
	gitc("add", ".")
	gitc("commit", "-q", "-m", "one")
	s, err := r.discover("dev")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	changed := func() []string {
		t.Helper()
		got, err := s.ChangedSince(ctx, "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := changed(); len(got) != 0 {
		t.Fatalf("nothing changed: got %v", got)
	}
	r.write("net/inner/main.sh", "new, untracked")
	r.write("common/cert.pem", "two") // uncommitted edit of a file app reads
	r.write("README.md", "outside every stack")
	if got, want := changed(), []string{"app", "inner"}; !slices.Equal(got, want) {
		t.Fatalf("changed = %v, want %v", got, want)
	}
	gitc("add", ".")
	gitc("commit", "-q", "-m", "two")
	if err := os.Remove(filepath.Join(r.root, "net/deployer.yaml")); err != nil {
		t.Fatal(err)
	}
	if got, want := changed(), []string{"net"}; !slices.Equal(got, want) {
		t.Fatalf("a deleted file counts: changed = %v, want %v", got, want)
	}
	if got, err := s.ChangedSince(ctx, "HEAD~1"); err != nil || !slices.Equal(got, []string{"app", "inner", "net"}) {
		t.Fatalf("since HEAD~1: %v, %v", got, err)
	}
	if _, err := s.ChangedSince(ctx, "no-such-branch"); err == nil || !strings.Contains(err.Error(), "fetch-depth: 0") {
		t.Errorf("unknown revision: err = %v", err)
	}
	if _, err := s.ChangedSince(ctx, "--output=/tmp/x"); err == nil {
		t.Error("an option as revision must be refused")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

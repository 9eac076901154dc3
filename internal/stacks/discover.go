package stacks

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/config"
)

// ConfigFile is the file that makes a directory a stack.
const ConfigFile = "deployer.yaml"

// Limits of a walk (docs/many-stacks.md#discovery): a root with more
// entries or stacks than this is refused with what to do, before anything
// is loaded.
const (
	MaxEntries = 200_000
	MaxStacks  = 1_000
)

// skipDirs are directories never searched besides hidden ones (.git,
// .deployer, .terraform, ...): dependencies vendored into the repository.
var skipDirs = map[string]bool{"node_modules": true, "vendor": true}

// Stack is one deployer.yaml found under the root.
type Stack struct {
	// Name is the file's stack:.
	Name string
	// Dir is the stack's directory relative to the root, slash-separated
	// ("." for the root itself); Path its deployer.yaml, as given to Load.
	Dir, Path string
	Config    *config.Config
	// Refs are the stack's StackReference components, by address.
	Refs []Ref
	// InEnv is false when Options.Env is set and deployer.yaml does not
	// declare that environment: the stack is left out of a run there.
	InEnv bool
	// Files are the files deployer.yaml reads through ${file:...},
	// absolute (config.Config.FileReferences).
	Files []string
}

// Ref is one StackReference: component Component reads the outputs of
// stack Stack in environment Env ("" for the environment of the run).
type Ref struct {
	Component string `json:"component"`
	Stack     string `json:"stack"`
	Env       string `json:"environment,omitempty"`
	// External: no stack under the root has that name; its state is read
	// as it is and it is never planned or deployed by a run of the set.
	External bool `json:"external,omitempty"`
}

// Options of Discover.
type Options struct {
	// Load reads one deployer.yaml (the CLI passes config.Load with the
	// backend registry's schemes and the DEPLOYER_* layer).
	Load func(path string) (*config.Config, error)
	// Env, when set, resolves each stack's references with that
	// environment's overrides and marks the stacks that lack it (InEnv).
	Env string
}

// Discover finds every deployer.yaml under root (skipping hidden
// directories such as .git and .deployer, node_modules and vendor), applies
// root's deployer-stacks.yaml when there is one, loads each file, reads
// its references and orders the stacks. Errors: a file that does not load
// (wrapped, naming it), a stack without stack:, two directories with the
// same stack:, a deployer-stacks.yaml entry that matches no stack, a
// *CycleError, or a root too large to walk (MaxEntries, MaxStacks).
func Discover(root string, o Options) (*Set, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	list, err := readList(abs)
	if err != nil {
		return nil, err
	}
	dirs, err := walk(abs)
	if err != nil {
		return nil, err
	}
	if dirs, err = list.filter(dirs); err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no %s under %s: run deployer stacks in the directory that holds your stacks (or create one with deployer init)", ConfigFile, abs)
	}
	s := &Set{Root: abs, Env: o.Env, byName: map[string]*Stack{}}
	for _, dir := range dirs {
		st, err := load(abs, dir, o)
		if err != nil {
			return nil, err
		}
		if prev := s.byName[st.Name]; prev != nil {
			return nil, fmt.Errorf("stack %s is declared twice, in %s and %s: give each deployer.yaml a stack: name of its own",
				st.Name, prev.Path, st.Path)
		}
		s.byName[st.Name] = st
	}
	for _, st := range s.byName {
		for i := range st.Refs {
			st.Refs[i].External = s.byName[st.Refs[i].Stack] == nil
		}
	}
	if err := s.order(); err != nil {
		return nil, err
	}
	return s, nil
}

// walk returns the directories under root (relative, slash-separated)
// that hold a deployer.yaml, sorted.
func walk(root string) ([]string, error) {
	var dirs []string
	entries := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != root && errors.Is(err, fs.ErrPermission) {
				return fs.SkipDir // an unreadable directory holds no stack we can deploy
			}
			return err
		}
		if entries++; entries > MaxEntries {
			return fmt.Errorf("more than %d files and directories under %s: run deployer from the directory that holds your stacks, or list them in %s",
				MaxEntries, root, ListFile)
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || skipDirs[d.Name()]) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Name() == ConfigFile && d.Type().IsRegular() {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
			if len(dirs) > MaxStacks {
				return fmt.Errorf("more than %d stacks under %s: run deployer from a smaller directory, or list the stacks in %s",
					MaxStacks, root, ListFile)
			}
		}
		return nil
	})
	slices.Sort(dirs)
	return dirs, err
}

// load reads the stack in dir (relative to root).
func load(root, dir string, o Options) (*Stack, error) {
	path := filepath.Join(root, filepath.FromSlash(dir), ConfigFile)
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
			path = rel // messages name the file as the user would
		}
	}
	cfg, err := o.Load(path)
	if err != nil {
		return nil, err
	}
	if cfg.Stack == "" {
		return nil, fmt.Errorf("%s has no stack: name: every stack of a repository needs one (add stack: NAME)", path)
	}
	st := &Stack{Name: cfg.Stack, Dir: dir, Path: path, Config: cfg, InEnv: true, Files: cfg.FileReferences()}
	comps := map[string]map[string]any{}
	kinds := map[string]string{}
	if o.Env != "" {
		res, err := cfg.Resolve(o.Env)
		if err != nil {
			st.InEnv = false
		} else {
			for addr, c := range res.Components {
				comps[addr], kinds[addr] = c.Config, c.Kind
			}
		}
	}
	if o.Env == "" || !st.InEnv {
		for svcName, svc := range cfg.Services {
			for name, c := range svc.Components {
				addr := config.Address(svcName, name)
				comps[addr], kinds[addr] = c.Config, c.Kind
			}
		}
	}
	for _, addr := range slices.Sorted(maps.Keys(comps)) {
		if kinds[addr] != referenceKind {
			continue
		}
		name, _ := comps[addr]["stack"].(string)
		env, _ := comps[addr]["environment"].(string)
		if name == "" {
			continue // config validation reports it when the stack is planned
		}
		st.Refs = append(st.Refs, Ref{Component: addr, Stack: name, Env: env})
	}
	return st, nil
}

// referenceKind is the kind whose components read another stack's outputs
// (docs/kinds.md, "StackReference"): config {stack, environment}.
const referenceKind = "StackReference"

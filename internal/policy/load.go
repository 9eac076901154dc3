package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// Bounds on what Load reads (docs/policy.md#bounds).
const (
	MaxFiles      = 1000     // .rego files over all directories
	MaxFileBytes  = 1 << 20  // one .rego file
	MaxTotalBytes = 16 << 20 // all of them together
)

// Namespace is the package every policy lives under: `package
// deployer.NAME` is the policy NAME (docs/policy.md#rules).
const Namespace = "deployer"

// File is one loaded .rego file.
type File struct {
	// Path is the file's path as found (its directory as given, joined
	// with its path below it); Rel is its path below the directory, with
	// forward slashes, what the digest covers.
	Path, Rel string
	Data      []byte
	Module    *ast.Module
}

// IsTest reports whether the file holds Rego unit tests (*_test.rego):
// deployer test runs them; evaluation and the digest leave them out.
func (f *File) IsTest() bool { return strings.HasSuffix(f.Rel, "_test.rego") }

// Set is the .rego files of some directories, parsed as Rego v1.
type Set struct {
	Dirs  []string
	Files []*File // sorted by directory order, then Rel
}

// Load reads every .rego file under dirs (recursively, following no
// symbolic link to a directory), in Rego v1 syntax. Errors: a directory
// that does not exist, more than MaxFiles files, a file over MaxFileBytes
// or all over MaxTotalBytes (*inputfile.TooLargeError), a parse error
// naming the file and line. No directory at all is an empty Set.
func Load(dirs []string) (*Set, error) {
	s := &Set{Dirs: slices.Clone(dirs)}
	var total int64
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("policy directory: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("policy directory %s is not a directory", dir)
		}
		var paths []string
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".rego") {
				paths = append(paths, path)
				if len(s.Files)+len(paths) > MaxFiles {
					return fmt.Errorf("policy directories hold more than %d .rego files", MaxFiles)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("policy directory %s: %w", dir, ErrNoPolicies)
		}
		slices.Sort(paths)
		for _, path := range paths {
			data, err := inputfile.Read(path, "policy file", MaxFileBytes)
			if err != nil {
				return nil, err
			}
			total += int64(len(data))
			if total > MaxTotalBytes {
				return nil, &inputfile.TooLargeError{Path: dir, What: "policy files together", Size: total, Limit: MaxTotalBytes}
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return nil, err
			}
			m, err := ast.ParseModuleWithOpts(path, string(data), ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
			if err != nil {
				return nil, fmt.Errorf("policy %w", err)
			}
			s.Files = append(s.Files, &File{Path: path, Rel: filepath.ToSlash(rel), Data: data, Module: m})
		}
	}
	return s, nil
}

// Digest is "sha256:" and the hex SHA-256 of the policy files (tests left
// out): per file in order, its path below its directory and its contents,
// each length-prefixed. It changes when a policy file is added, removed,
// renamed or edited, and not when the directories are named differently
// (a checkout elsewhere, a relative path): what a saved plan binds
// (docs/policy.md#saved-plans). An empty Set digests to "".
func (s *Set) Digest() string {
	h := sha256.New()
	n := 0
	for _, f := range s.Files {
		if f.IsTest() {
			continue
		}
		n++
		fmt.Fprintf(h, "%d:%s%d:", len(f.Rel), f.Rel, len(f.Data))
		h.Write(f.Data)
	}
	if n == 0 {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Empty reports whether the Set has no policy file (tests left out).
func (s *Set) Empty() bool {
	return s == nil || !slices.ContainsFunc(s.Files, func(f *File) bool { return !f.IsTest() })
}

// ErrNoPolicies: a directory named for policies holds no .rego file (a
// wrong path must not read as "no policy denies").
var ErrNoPolicies = errors.New("holds no .rego file")

// Open loads the policy files of dirs (Load) and compiles them (Compile):
// what a plan's check needs from a list of directories. Errors: Load's and
// Compile's.
func Open(ctx context.Context, dirs []string) (*Engine, error) {
	set, err := Load(dirs)
	if err != nil {
		return nil, err
	}
	return set.Compile(ctx)
}

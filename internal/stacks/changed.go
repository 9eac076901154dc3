package stacks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deployer-dev/deployer/internal/proc"
)

// maxGitOutput bounds what ChangedSince reads from git (64 MiB of paths).
const maxGitOutput = 64 << 20

// ChangedSince returns the stacks of s, sorted by name, that a change since
// the git revision ref touches: a file changed, added, deleted or untracked
// (not ignored) in the stack's directory (nested stacks own their own
// directories), or a file its deployer.yaml reads through ${file:...}. It
// compares ref with the working tree, so uncommitted edits count. Stacks
// that read the changed ones are not added here: Set.Downstream adds them.
//
// Errors: git is missing, s.Root is not in a git work tree, or ref names no
// commit (in a shallow CI clone: fetch it, e.g. actions/checkout with
// fetch-depth: 0).
func (s *Set) ChangedSince(ctx context.Context, ref string) ([]string, error) {
	if strings.HasPrefix(ref, "-") {
		return nil, fmt.Errorf("--changed-since %q: want a git revision such as origin/main or HEAD~1", ref)
	}
	top, err := git(ctx, s.Root, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("--changed-since needs a git work tree: %s: %w", s.Root, err)
	}
	topDir := strings.TrimSpace(string(top))
	if real, err := filepath.EvalSymlinks(topDir); err == nil {
		topDir = real
	}
	if _, err := git(ctx, topDir, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		return nil, fmt.Errorf("--changed-since %s: git knows no commit of that name (in a shallow clone, fetch it first, e.g. actions/checkout with fetch-depth: 0)", ref)
	}
	diff, err := git(ctx, topDir, "diff", "--name-only", "--no-renames", "-z", ref, "--")
	if err != nil {
		return nil, fmt.Errorf("git diff %s: %w", ref, err)
	}
	untracked, err := git(ctx, topDir, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []string
	for _, out := range [][]byte{diff, untracked} {
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 {
				files = append(files, filepath.Join(topDir, filepath.FromSlash(string(f))))
			}
		}
	}
	return s.owners(files), nil
}

// owners returns the stacks that own or read files (absolute paths).
func (s *Set) owners(files []string) []string {
	byDir := map[string]*Stack{}
	reads := map[string][]string{}
	for _, st := range s.Stacks {
		byDir[filepath.Join(s.Root, filepath.FromSlash(st.Dir))] = st
		for _, f := range st.Files {
			reads[f] = append(reads[f], st.Name)
		}
	}
	hit := map[string]bool{}
	for _, f := range files {
		for _, n := range reads[f] {
			hit[n] = true
		}
		for d := filepath.Dir(f); ; d = filepath.Dir(d) {
			if st := byDir[d]; st != nil {
				hit[st.Name] = true // the deepest stack directory owns the file
				break
			}
			if d == s.Root || d == filepath.Dir(d) || !strings.HasPrefix(d, s.Root) {
				break
			}
		}
	}
	out := make([]string, 0, len(hit))
	for n := range hit {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// git runs git in dir under the supervisor (proc.Cmd) and returns its
// stdout, at most maxGitOutput bytes; errors carry git's stderr (its first
// 64 KiB).
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := proc.Command(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = proc.Environ(proc.Git, os.Environ())
	stderr := &proc.Capped{Max: 64 << 10}
	cmd.Stderr = stderr
	out, over, err := cmd.OutputAtMost(maxGitOutput)
	var ee *exec.ExitError
	switch {
	case over:
		return nil, fmt.Errorf("git %s printed more than %d bytes", args[0], maxGitOutput)
	case errors.As(err, &ee):
		if msg := strings.TrimSpace(string(stderr.Bytes())); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, err
	case errors.Is(err, exec.ErrNotFound):
		return nil, fmt.Errorf("run git: %w (install git)", err)
	case err != nil:
		return nil, fmt.Errorf("run git: %w", err)
	}
	return out, nil
}

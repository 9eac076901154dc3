package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/proc"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// NewDeploymentID returns "dep-" and 12 hex digits (docs/design.md#lock-record).
func NewDeploymentID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "dep-" + hex.EncodeToString(b[:])
}

// GitInfo returns commit and branch from CI variables or the local git
// checkout in dir; empty when unknown.
func (c *Core) GitInfo(dir string) (commit, branch string) {
	_, md := lockmgr.Holder(c.Getenv)
	commit, branch = md.GitCommit, md.GitBranch
	if commit == "" {
		commit = gitLine(dir, "rev-parse", "HEAD")
	}
	if branch == "" {
		branch = gitLine(dir, "rev-parse", "--abbrev-ref", "HEAD")
	}
	return commit, branch
}

// gitLine runs git in dir under the supervisor and returns what it printed,
// trimmed: a commit or a branch name, read up to 4 KiB; "" when git fails
// or prints more.
func gitLine(dir string, args ...string) string {
	c := proc.Command(context.Background(), "git", append([]string{"-C", dir}, args...)...)
	c.Env = proc.Environ(proc.Git, os.Environ())
	out, over, err := c.OutputAtMost(4 << 10)
	if err != nil || over {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// ReadState reads the state document of t once, unverified
// (statestore.Store.ReadDoc); nil when there is none yet.
func (c *Core) ReadState(ctx context.Context, t Target) (*statestore.Doc, error) {
	doc, err := c.Store.ReadDoc(ctx, t.Stack, t.Env)
	if errors.Is(err, statestore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &doc, nil
}

// LoadOrNew loads the state of the target, or a new empty one.
func (c *Core) LoadOrNew(ctx context.Context, t Target) (*statestore.State, statestore.Head, error) {
	st, head, err := c.Store.Load(ctx, t.Stack, t.Env)
	if errors.Is(err, statestore.ErrNotFound) {
		return statestore.NewState(t.Stack, t.Env), statestore.Head{}, nil
	}
	if err != nil {
		return nil, statestore.Head{}, err
	}
	return st, head, nil
}

// LoadOrHead loads the state of t and its Head. A state that fails
// verification gives no state, the Head statestore.Store.CurrentHead reads
// of it, and its *statestore.ChecksumError as bad; no state gives no state
// and the zero Head. Other errors are err.
func (c *Core) LoadOrHead(ctx context.Context, t Target) (st *statestore.State, head statestore.Head, bad, err error) {
	st, head, err = c.Store.Load(ctx, t.Stack, t.Env)
	var checksum *statestore.ChecksumError
	switch {
	case err == nil:
		return st, head, nil, nil
	case errors.Is(err, statestore.ErrNotFound):
		return nil, statestore.Head{}, nil, nil
	case errors.As(err, &checksum):
		head, herr := c.Store.CurrentHead(ctx, t.Stack, t.Env)
		return nil, head, err, herr
	}
	return nil, statestore.Head{}, nil, err
}

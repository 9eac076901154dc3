package core

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// erroredBase is the path, without its extension, of the errored state of
// stack/env that a failed state write leaves in dir
// (docs/design.md#state-writes): base+".json", and base+".passphrase"
// when its generated passphrase was kept in a file.
func erroredBase(dir, stack, env string) string {
	return filepath.Join(dir, fmt.Sprintf("deployer-errored-%s-%s", stack, env))
}

// PendingErroredError: an errored state of the target is waiting in Path.
// Its changes ran but are not in the stored state, so a deploy now would
// run them again (a create twice is a second instance): the file must be
// pushed or discarded first (docs/operations.md#an-errored-state-first).
type PendingErroredError struct {
	Path       string
	Stack, Env string
}

func (e *PendingErroredError) Error() string {
	return fmt.Sprintf("%s holds the state of an earlier run on %s/%s whose state write failed: what it ran is not in the stored state, "+
		"and running now would do it again.\nWrite it first: deployer state push %s -s %s -e %s --yes "+
		"(with the passphrase the error of that run named, if it printed one)\n"+
		"or, if it is of no use (you pushed or repaired the state otherwise), discard it: rm %s",
		e.Path, e.Stack, e.Env, e.Path, e.Stack, e.Env, e.Path)
}

// RefuseErrored returns a *PendingErroredError when an errored state of t
// is in the core's directory (Deps.Dir): a regular file, as saveErrored writes it
// (anything else there is replaced by the next errored state, never read).
func (c *Core) RefuseErrored(t Target) error {
	path := erroredBase(c.Dir, t.Stack, t.Env) + ".json"
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		return &PendingErroredError{Path: path, Stack: t.Stack, Env: t.Env}
	}
	return nil
}

// IsErroredFile reports whether path names the errored state of
// stack/env (deployer-errored-STACK-ENV.json), in any directory.
func IsErroredFile(path, stack, env string) bool {
	return filepath.Base(path) == filepath.Base(erroredBase("", stack, env))+".json"
}

// RemoveErrored removes the errored state at path once it is written;
// errors other than "not there" are returned. A generated passphrase's
// file beside it stays: that passphrase opens the state now.
func RemoveErrored(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

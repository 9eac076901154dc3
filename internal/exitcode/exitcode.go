// Package exitcode owns deployer's exit codes (docs/exit-codes.md): their
// values, the small interface an error implements to carry its code, and Of,
// which finds the code of an error tree. Each domain error type says its own
// code, so cmd/deployer maps errors without importing the packages that
// define them. The command line's own two are here: UsageError (a mistake
// in flags or arguments, exit 2) and ExitCodeError (a code asked for
// without a message).
package exitcode

import (
	"context"
	"errors"
	"sync"
)

// The exit codes of docs/exit-codes.md.
const (
	OK        = 0
	Error     = 1   // any other error
	Usage     = 2   // a command-line mistake
	LockHeld  = 3   // a lock held, or a lease lost
	State     = 4   // a state conflict: CAS lost, checksum, lineage, a stale saved plan, a lease lost before the write
	Policy    = 5   // denied by policy
	Refused   = 6   // a protected component, or dependents outside the target
	Skipped   = 7   // deploy --run-id: an upstream stack of the run did not succeed
	Cancelled = 130 // Ctrl-C or SIGTERM
)

// Coder is an error that carries its exit code. DeployerExitCode returns 0
// when this error has no code of its own (the errors it wraps decide). The
// name is not ExitCode because *exec.ExitError and proc's errors have an
// ExitCode method: a child's exit code, which is not deployer's.
type Coder interface {
	DeployerExitCode() int
}

// precedence ranks the codes, most specific first: when an error tree
// holds several (a cancelled apply whose state write also conflicted), the
// earliest here wins.
var precedence = []int{Cancelled, State, LockHeld, Policy, Refused, Skipped, Usage, Error}

// Of returns the exit code of err: OK for nil; Cancelled for an error that
// is (or wraps) context.Canceled; otherwise the code of precedence's first
// rank that some error in err's tree (Unwrap, and the []error of a join)
// carries through Coder, or that a sentinel of New carries when
// errors.Is(err, sentinel) (so an error whose Is method matches a sentinel
// gets its code); Error when none does.
func Of(err error) int {
	if err == nil {
		return OK
	}
	if errors.Is(err, context.Canceled) {
		return Cancelled
	}
	best := -1
	consider := func(c int) {
		if r := rank(c); r >= 0 && (best < 0 || r < best) {
			best = r
		}
	}
	walk(err, consider)
	sentinelsMu.Lock()
	all := sentinels
	sentinelsMu.Unlock()
	for _, s := range all {
		if errors.Is(err, s) {
			consider(s.code)
		}
	}
	if best < 0 {
		return Error
	}
	return precedence[best]
}

func rank(code int) int {
	for i, c := range precedence {
		if c == code {
			return i
		}
	}
	return -1
}

// walk calls f with the code of every Coder in err's tree that has one.
func walk(err error, f func(int)) {
	if err == nil {
		return
	}
	if c, ok := err.(Coder); ok {
		if code := c.DeployerExitCode(); code != 0 {
			f(code)
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, f)
		}
	}
}

// New returns a sentinel error whose text is msg and whose exit code is
// code, for package-level values compared with errors.Is
// (lockmgr.ErrLockLost, exit 3).
func New(code int, msg string) error {
	s := &sentinel{msg: msg, code: code}
	sentinelsMu.Lock()
	sentinels = append(sentinels, s)
	sentinelsMu.Unlock()
	return s
}

var (
	sentinelsMu sync.Mutex
	sentinels   []*sentinel // every New, for Of's errors.Is
)

type sentinel struct {
	msg  string
	code int
}

func (e *sentinel) Error() string         { return e.msg }
func (e *sentinel) DeployerExitCode() int { return e.code }

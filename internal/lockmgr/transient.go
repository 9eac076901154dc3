package lockmgr

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// TransientChecker is implemented by backends that recognise their store's
// passing failures: a failover or restart answer (Redis LOADING, READONLY,
// CLUSTERDOWN; PostgreSQL "the database system is starting up",
// "terminating connection due to administrator command") or throttling
// (docs/locking.md, "Backend failures while waiting").
type TransientChecker interface {
	// Transient reports whether err, returned by one of the backend's
	// calls, may go away by itself when the call is tried again.
	Transient(err error) bool
}

// Transient reports whether err (from b) is a passing backend failure that
// the Manager waits out within the lock timeout: a refused, reset or broken
// connection, a network timeout, or what b's TransientChecker recognises.
// The caller's own context ending, a held lock, a lost lease and every
// answer a user must act on (access denied, a missing table) are not.
func Transient(b Backend, err error) bool {
	if err == nil {
		return false
	}
	var held *HeldError
	var skew *ClockSkewError
	if errors.As(err, &held) || errors.As(err, &skew) || errors.Is(err, ErrLockLost) || errors.Is(err, ErrNotFound) || IsRecordTooLarge(err) {
		return false
	}
	// A dial that timed out wraps DeadlineExceeded: still the network's.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if tc, ok := b.(TransientChecker); ok && tc.Transient(err) {
		return true
	}
	return NetworkError(err)
}

// NetworkError reports a connection that could not be made or broke: refused,
// reset, aborted, unreachable, an unexpected EOF, or a network timeout.
func NetworkError(err error) bool {
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EPIPE, syscall.EHOSTUNREACH, syscall.ENETUNREACH, io.EOF, io.ErrUnexpectedEOF, net.ErrClosed} {
		if errors.Is(err, e) {
			return true
		}
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

package lockmgr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/none"
)

// passing is a backend that calls errors saying "LOADING" passing, as a
// store's TransientChecker does.
type passing struct{ lockmgr.Backend }

func (passing) Transient(err error) bool { return err.Error() == "LOADING Redis is loading" }

// What a command with lock timeout left waits out, and what fails at once
// (docs/locking.md#backend-failures-while-waiting).
func TestTransient(t *testing.T) {
	b := passing{none.New()}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("acquire lock x in redis: %w", refused), true},
		{"dial timed out (wraps DeadlineExceeded)", &net.OpError{Op: "dial", Net: "tcp", Err: context.DeadlineExceeded}, true},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"unexpected EOF", fmt.Errorf("reply: %w", io.ErrUnexpectedEOF), true},
		{"the backend's own passing answer", errors.New("LOADING Redis is loading"), true},
		{"held", &lockmgr.HeldError{}, false},
		{"lost", fmt.Errorf("heartbeat: %w", lockmgr.ErrLockLost), false},
		{"our context cancelled", fmt.Errorf("acquire: %w", context.Canceled), false},
		{"access denied", errors.New("AccessDenied: not authorized"), false},
		{"clock skew", &lockmgr.ClockSkewError{}, false},
	} {
		if got := lockmgr.Transient(b, c.err); got != c.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

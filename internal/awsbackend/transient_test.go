package awsbackend_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/deployer-dev/deployer/internal/awsbackend"
)

// Throttling, 5xx answers and network failures pass; access denied and a
// missing table do not (docs/locking.md#backend-failures-while-waiting).
func TestIsTransient(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, true},
		{&smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}, true},
		{&smithy.GenericAPIError{Code: "SlowDown"}, true},
		{fmt.Errorf("operation error DynamoDB: UpdateItem: %w", refused), true},
		{&smithy.GenericAPIError{Code: "AccessDeniedException"}, false},
		{&smithy.GenericAPIError{Code: "ResourceNotFoundException"}, false},
		{errors.New("something else"), false},
	} {
		if got := awsbackend.IsTransient(c.err); got != c.want {
			t.Errorf("IsTransient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

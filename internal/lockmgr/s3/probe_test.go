package s3_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// A store that ignores If-None-Match would let two holders "acquire" the same
// key: the backend refuses to run there, before writing any lock.
func TestRefusesServerIgnoringConditionalWrites(t *testing.T) {
	d := awstest.NewCarelessS3(t)
	b := open(t, "s3://careless-lock-bucket", d.Options())
	now := time.Now()
	_, err := b.TryAcquire(context.Background(), record(lockmgr.StackKey("s", "e"), now, time.Hour, "alice@laptop"))
	var ignored *awsbackend.ErrConditionalWritesIgnored
	if !errors.As(err, &ignored) {
		t.Fatalf("TryAcquire on a store ignoring If-None-Match = %v, want *ErrConditionalWritesIgnored", err)
	}
	if ignored.Header != "If-None-Match" || ignored.Bucket != "careless-lock-bucket" {
		t.Errorf("refusal names %s on %q, want If-None-Match on careless-lock-bucket", ignored.Header, ignored.Bucket)
	}
	puts := d.Puts.Load()
	// The refusal is not remembered as success: the next call probes again
	// and refuses again, and no lock object was ever written.
	if _, err := b.List(context.Background(), ""); !errors.As(err, &ignored) {
		t.Errorf("List after refusal = %v, want the same refusal", err)
	}
	if got := d.Puts.Load() - puts; got != 2 {
		t.Errorf("second probe made %d PUTs, want 2 (scratch object + conditional PUT)", got)
	}
}

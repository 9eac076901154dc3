package s3_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// A PUT whose reply is lost (MinIO applied it, the connection closed, the SDK
// retried and got 412) is recognised as ours by reading back: acquire,
// heartbeat and release each succeed once, and no ghost record stays behind
// (docs/locking.md, "Lost replies").
func TestLostRepliesAreOurs(t *testing.T) {
	_, bucket, o := awstest.NewBucket(t)
	proxy := faulttest.NewReplyDropper(t, o.S3Endpoint)
	o.S3Endpoint = proxy.URL
	b := open(t, "s3://"+bucket, o)
	ctx := context.Background()
	key := lockmgr.CustomKey("lost-reply")
	now := time.Now()
	rec := record(key, now, time.Hour, "alice@laptop")

	for _, round := range []string{"create", "takeover"} {
		rec := rec
		if round == "takeover" {
			rec = record(key, now, time.Hour, "alice@laptop")
		}
		proxy.DropNext(faulttest.S3Put("/locks/", rec.LockID))
		got, err := b.TryAcquire(ctx, rec)
		if err != nil {
			t.Fatalf("%s: TryAcquire with its reply lost: %v (want our own record back)", round, err)
		}
		if got.LockID != rec.LockID {
			t.Errorf("%s: TryAcquire with its reply lost = lockId %s, want ours (%s)", round, got.LockID, rec.LockID)
		}

		at := now.Add(30 * time.Second)
		proxy.DropNext(faulttest.S3Put("/locks/", rec.LockID, `"lastHeartbeat":`))
		if err := b.Heartbeat(ctx, key, rec.LockID, at, at.Add(time.Hour)); err != nil {
			t.Fatalf("%s: Heartbeat with its reply lost: %v", round, err)
		}

		proxy.DropNext(faulttest.S3Put("/locks/", rec.LockID, `"released":true`))
		if err := b.Release(ctx, key, rec.LockID); err != nil {
			t.Fatalf("%s: Release with its reply lost: %v (want our own release recognised)", round, err)
		}
		if cur, err := b.Get(ctx, key); !errors.Is(err, lockmgr.ErrNotFound) {
			t.Errorf("%s: after the release: %+v, %v; want ErrNotFound", round, cur, err)
		}
		if n := proxy.Armed(); n != 0 {
			t.Fatalf("%s: %d faults never fired; dropped: %v", round, n, proxy.Dropped())
		}
	}
	t.Logf("dropped replies: %v", proxy.Dropped())
}

package s3_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	s3lock "github.com/deployer-dev/deployer/internal/lockmgr/s3"
)

// open returns an independent client (own SDK client and cache) of the bucket.
func open(tb testing.TB, raw string, o awsbackend.Options) *s3lock.Backend {
	tb.Helper()
	b, err := s3lock.Open(context.Background(), raw, o)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	_, bucket, o := awstest.NewBucket(t)
	raw := "s3://" + bucket + "/team-a"
	locktest.Run(t, func(t *testing.T) lockmgr.Backend { return open(t, raw, o) })
}

func record(key string, lockedAt time.Time, ttl time.Duration, by string) lockmgr.Record {
	return lockmgr.Record{LockKey: key, LockID: uuid.NewString(), LockedBy: by, LockedAt: lockedAt.Unix(),
		ExpiresAt: lockedAt.Add(ttl).Unix(), LastHeartbeat: lockedAt.Unix(), Metadata: lockmgr.Metadata{Operation: "deploy"}}
}

// A holder paused past its TTL is taken over; when it wakes up, its heartbeat
// and release fail with ErrLockLost and the new holder's record is intact,
// even though MinIO ignores conditional DELETE.
func TestStaleHolderCannotTouchNewHolder(t *testing.T) {
	_, bucket, o := awstest.NewBucket(t)
	raw := "s3://" + bucket
	ctx := context.Background()
	old, next := open(t, raw, o), open(t, raw, o)
	key := lockmgr.StackKey("user-platform", "production")
	t0 := time.Unix(1_705_329_600, 0)

	a, err := old.TryAcquire(ctx, record(key, t0, time.Minute, "alice@laptop"))
	if err != nil {
		t.Fatal(err)
	}
	// Two minutes later the record has expired: another client takes over.
	b, err := next.TryAcquire(ctx, record(key, t0.Add(2*time.Minute), time.Hour, "github-actions-run-7"))
	if err != nil {
		t.Fatalf("takeover of an expired record: %v", err)
	}
	if b.Fence <= a.Fence {
		t.Errorf("takeover fence %d, want > %d", b.Fence, a.Fence)
	}
	if err := old.Heartbeat(ctx, key, a.LockID, t0.Add(3*time.Minute), t0.Add(time.Hour)); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("stale holder heartbeat = %v, want ErrLockLost", err)
	}
	if err := old.Release(ctx, key, a.LockID); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("stale holder release = %v, want ErrLockLost", err)
	}
	got, err := open(t, raw, o).Get(ctx, key)
	if err != nil {
		t.Fatalf("new holder's record is gone: %v", err)
	}
	if d := cmp.Diff(b, got); d != "" {
		t.Errorf("new holder's record changed (-want +got):\n%s", d)
	}
	// The new holder can still heartbeat and release.
	if err := next.Heartbeat(ctx, key, b.LockID, t0.Add(4*time.Minute), t0.Add(2*time.Hour)); err != nil {
		t.Errorf("new holder heartbeat: %v", err)
	}
	if err := next.Release(ctx, key, b.LockID); err != nil {
		t.Errorf("new holder release: %v", err)
	}
	// A released record is free and keeps its fence.
	c, err := old.TryAcquire(ctx, record(key, t0.Add(5*time.Minute), time.Hour, "alice@laptop"))
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if c.Fence <= b.Fence {
		t.Errorf("fence after release %d, want > %d", c.Fence, b.Fence)
	}
}

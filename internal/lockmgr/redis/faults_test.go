package redis_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/redis"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// A script whose reply is lost (Redis ran it, the connection closed, go-redis
// retried it on a new connection) is recognised as ours: acquire, heartbeat
// and release each succeed once and leave no ghost record (docs/locking.md,
// "Lost replies").
func TestLostRepliesAreOurs(t *testing.T) {
	raw := testenv.Require(t, testenv.RedisURL, "Redis")
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	proxy := faulttest.NewTCPDropper(t, u.Host)
	u.Host = proxy.Addr
	q := u.Query()
	q.Set("key_prefix", namespace(t))
	u.RawQuery = q.Encode()
	ctx := context.Background()
	b, err := redis.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := lockmgr.CustomKey("lost-" + uuid.NewString()[:8])
	now := time.Now()
	rec := lockmgr.Record{LockKey: key, LockID: uuid.NewString(), LockedBy: "alice@laptop", LockedAt: now.Unix(),
		ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix(), Metadata: lockmgr.Metadata{Operation: "exec"}}

	proxy.DropNext(rec.LockID) // the acquire script carries the record
	got, err := b.TryAcquire(ctx, rec)
	if err != nil || got.LockID != rec.LockID || got.Fence < 1 {
		t.Fatalf("TryAcquire with its reply lost = %+v, %v; want our own record", got, err)
	}
	at := now.Add(30 * time.Second)
	proxy.DropNext(rec.LockID)
	if err := b.Heartbeat(ctx, key, rec.LockID, at, at.Add(time.Hour)); err != nil {
		t.Fatalf("Heartbeat with its reply lost: %v", err)
	}
	proxy.DropNext(rec.LockID)
	if err := b.Release(ctx, key, rec.LockID); err != nil {
		t.Fatalf("Release with its reply lost: %v (want our own release recognised)", err)
	}
	if cur, err := b.Get(ctx, key); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("after the release: %+v, %v; want ErrNotFound", cur, err)
	}
	if n := proxy.Armed(); n != 0 {
		t.Fatalf("%d faults never fired (%d dropped)", n, proxy.Dropped())
	}
	// A second release of the same lease is still reported.
	if err := b.Release(ctx, key, rec.LockID); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("second Release of one lease = %v, want ErrLockLost", err)
	}
}

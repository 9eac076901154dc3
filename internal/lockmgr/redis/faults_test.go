package redis_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
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
	rec := locktest.LostReplies(t, b, proxy, nil)
	// A second release of the same lease is still reported.
	if err := b.Release(ctx, rec.LockKey, rec.LockID); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("second Release of one lease = %v, want ErrLockLost", err)
	}
}

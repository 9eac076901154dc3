package redis_test

import (
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// An 8 MiB value at a lock key, SET directly (docs/locking.md, "Record
// size"): the scripts measure it with STRLEN and never send it.
func TestOversizedRecordIsHeldAndNamed(t *testing.T) {
	ns := namespace(t)
	b := opener(t, ns)(t)
	opts, err := goredis.ParseURL(testenv.Require(t, testenv.RedisURL, "Redis"))
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	locktest.RunOversized(t, b, func(t *testing.T, key string, data []byte) {
		if err := c.Set(t.Context(), ns+":lock:{"+key+"}", data, 0).Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Del(t.Context(), ns+":lock:{"+key+"}") })
	})
}

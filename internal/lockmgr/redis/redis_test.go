package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	"github.com/deployer-dev/deployer/internal/lockmgr/redis"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// namespace returns a key_prefix of its own for one test binary run, so runs
// against a shared server never meet.
func namespace(tb testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "deployer-test-" + hex.EncodeToString(b[:])
}

// opener returns a constructor of independent clients of the server at
// DEPLOYER_TEST_REDIS_URL, all in namespace ns.
func opener(tb testing.TB, ns string) func(tb testing.TB) *redis.Backend {
	url := testenv.Require(tb, testenv.RedisURL, "Redis")
	return func(tb testing.TB) *redis.Backend {
		tb.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b, err := redis.Open(ctx, url+"?key_prefix="+ns)
		if err != nil {
			tb.Fatalf("open redis backend: %v", err)
		}
		return b
	}
}

func TestConformance(t *testing.T) {
	open := opener(t, namespace(t))
	locktest.Run(t, func(t *testing.T) lockmgr.Backend { return open(t) })
}

// A glob metacharacter in a prefix is matched literally: List("custom:a*")
// does not return custom:ab.
func TestListPrefixIsLiteral(t *testing.T) {
	b := opener(t, namespace(t))(t)
	defer b.Close()
	ctx := context.Background()
	now := time.Now()
	for _, name := range []string{"a*", "ab"} {
		rec := lockmgr.Record{LockKey: lockmgr.CustomKey(name), LockID: uuid.NewString(), LockedBy: "t",
			LockedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix()}
		if _, err := b.TryAcquire(ctx, rec); err != nil {
			t.Fatalf("TryAcquire(%s): %v", rec.LockKey, err)
		}
	}
	got, err := b.List(ctx, "custom:a*")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].LockKey != "custom:a*" {
		t.Errorf("List(custom:a*) = %+v, want only custom:a*", got)
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		url, wantNS, wantMaster string
		wantAddrs               []string
		wantDB                  int
		wantCluster, wantTLS    bool
	}{
		{url: "redis://127.0.0.1:6379/2", wantNS: "deployer", wantAddrs: []string{"127.0.0.1:6379"}, wantDB: 2},
		{url: "rediss://:pw@cache:6380?key_prefix=team-a", wantNS: "team-a", wantAddrs: []string{"cache:6380"}, wantTLS: true},
		{url: "redis://s1:26379?master_name=mymaster&addr=s2:26379", wantNS: "deployer", wantMaster: "mymaster", wantAddrs: []string{"s1:26379", "s2:26379"}},
		{url: "redis://cfg:7000?cluster=true", wantNS: "deployer", wantAddrs: []string{"cfg:7000"}, wantCluster: true},
	}
	for _, tc := range tests {
		o, ns, err := redis.ParseURL(tc.url)
		if err != nil {
			t.Errorf("ParseURL(%s): %v", tc.url, err)
			continue
		}
		if ns != tc.wantNS || o.MasterName != tc.wantMaster || o.DB != tc.wantDB || o.IsClusterMode != tc.wantCluster ||
			(o.TLSConfig != nil) != tc.wantTLS || len(o.Addrs) != len(tc.wantAddrs) {
			t.Errorf("ParseURL(%s) = %+v ns %q", tc.url, o, ns)
			continue
		}
		for i := range o.Addrs {
			if o.Addrs[i] != tc.wantAddrs[i] {
				t.Errorf("ParseURL(%s) addrs = %v, want %v", tc.url, o.Addrs, tc.wantAddrs)
			}
		}
	}
	for _, bad := range []string{"http://h:6379", "redis://h:6379?cluster=maybe", "redis://h?key_prefix=a*b", "redis://h?bogus=1"} {
		if _, _, err := redis.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%s) accepted a bad URL", bad)
		}
	}
}

// releaseFloor is the raw compare-and-delete.
var releaseFloor = goredis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

// BenchmarkAcquireRelease: deployer's backend (and Manager) next to the raw
// floor on the same server (SET NX PX + Lua compare-and-delete) and next to
// go-redsync's Lock/Unlock (performance target: within 1.3x of the floor).
func BenchmarkAcquireRelease(b *testing.B) {
	ns := namespace(b)
	open := opener(b, ns)
	locktest.Bench(b, func(b *testing.B) lockmgr.Backend { return open(b) })

	url := testenv.Require(b, testenv.RedisURL, "Redis")
	o, err := goredis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	c := goredis.NewClient(o)
	b.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()

	b.Run("RawSetNXLuaDelete", func(b *testing.B) {
		key := ns + ":raw"
		for b.Loop() {
			id := uuid.NewString()
			ok, err := c.SetNX(ctx, key, id, time.Hour).Result()
			if err != nil || !ok {
				b.Fatalf("SET NX = %v, %v", ok, err)
			}
			if n, err := releaseFloor.Run(ctx, c, []string{key}, id).Int64(); err != nil || n != 1 {
				b.Fatalf("compare-and-delete = %d, %v", n, err)
			}
		}
	})
	b.Run("Redsync", func(b *testing.B) {
		rs := redsync.New(redsyncgoredis.NewPool(c))
		m := rs.NewMutex(ns+":redsync", redsync.WithTries(1), redsync.WithExpiry(time.Hour))
		for b.Loop() {
			if err := m.LockContext(ctx); err != nil {
				b.Fatalf("redsync Lock: %v", err)
			}
			if ok, err := m.UnlockContext(ctx); err != nil || !ok {
				b.Fatalf("redsync Unlock = %v, %v", ok, err)
			}
		}
	})
}

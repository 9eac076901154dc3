package redis_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	"github.com/deployer-dev/deployer/internal/lockmgr/redis"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// serverLimit bounds how long a server started by a test may take to say it
// is ready; reaching it fails the test (it only turns a hang into a failure).
const serverLimit = 2 * time.Minute

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// server is a redis-server (or Sentinel) the test started; lines receives
// its log.
type server struct {
	port  int
	cmd   *exec.Cmd
	lines chan string
}

// startRedis runs redis-server with the config lines given (plus port, bind,
// no persistence, log to stdout) and waits until it logs "Ready to accept
// connections" (a Sentinel: "+monitor master"). It is killed when the test
// ends.
func startRedis(t *testing.T, bin string, sentinel bool, conf ...string) *server {
	t.Helper()
	port := freePort(t)
	dir := t.TempDir()
	conf = append([]string{fmt.Sprintf("port %d", port), "bind 127.0.0.1", "save \"\"", "appendonly no",
		"dir " + dir, "logfile \"\""}, conf...)
	path := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(path, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{path}
	if sentinel {
		args = append(args, "--sentinel")
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	s := &server{port: port, cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, out)
		close(s.lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if sentinel {
		s.waitLog(t, "+monitor master")
	} else {
		s.waitLog(t, "Ready to accept connections")
	}
	return s
}

// waitLog waits until the server logs a line containing text.
func (s *server) waitLog(t *testing.T, text string) {
	t.Helper()
	timeout := time.After(serverLimit)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("redis-server on port %d exited before logging %q", s.port, text)
			}
			if strings.Contains(l, text) {
				return
			}
		case <-timeout:
			t.Fatalf("redis-server on port %d did not log %q within %s", s.port, text, serverLimit)
		}
	}
}

func (s *server) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// poll runs check every 100 ms until it returns nil, failing the test after
// serverLimit with the last error.
func poll(t *testing.T, what string, check func() error) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(serverLimit)
	var err error
	for {
		if err = check(); err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("%s: still %v after %s", what, err, serverLimit)
		}
	}
}

// A Redis master shut down in the middle of a lock storm (a master, a
// replica, three Sentinels on loopback, as an operator runs them) is waited
// out while Sentinel promotes the replica: every Acquire with lock timeout
// left succeeds, no section overlaps, no update is lost.
func TestStormRidesOutSentinelFailover(t *testing.T) {
	bin := testenv.Require(t, testenv.RedisServer, "redis-server")
	master := startRedis(t, bin, false)
	replica := startRedis(t, bin, false, "replicaof 127.0.0.1 "+fmt.Sprint(master.port))
	replica.waitLog(t, "MASTER <-> REPLICA sync: Finished with success")
	var sentinels []*server
	for range 3 {
		sentinels = append(sentinels, startRedis(t, bin, true,
			fmt.Sprintf("sentinel monitor deployer 127.0.0.1 %d 2", master.port),
			"sentinel down-after-milliseconds deployer 1000",
			"sentinel failover-timeout deployer 10000"))
	}
	ctx := context.Background()
	sc := goredis.NewSentinelClient(&goredis.Options{Addr: sentinels[0].addr()})
	defer sc.Close()
	poll(t, "sentinels know the replica and each other", func() error {
		reps, err := sc.Replicas(ctx, "deployer").Result()
		if err != nil || len(reps) == 0 {
			return fmt.Errorf("replicas %v, %v", reps, err)
		}
		sen, err := sc.Sentinels(ctx, "deployer").Result()
		if err != nil || len(sen) < 2 {
			return fmt.Errorf("other sentinels %v, %v", sen, err)
		}
		return nil
	})
	url := fmt.Sprintf("redis://%s?master_name=deployer&addr=%s&addr=%s&key_prefix=%s",
		sentinels[0].addr(), sentinels[1].addr(), sentinels[2].addr(), namespace(t))
	res := locktest.Storm(t, func(t *testing.T) lockmgr.Backend {
		b, err := redis.Open(ctx, url)
		if err != nil {
			t.Fatalf("open redis backend through Sentinel: %v", err)
		}
		return b
	}, locktest.StormConfig{Workers: 8, Cycles: locktest.StormCycles(30), Section: 5 * time.Millisecond,
		Disrupt: func(t *testing.T) {
			// SHUTDOWN waits for the replica to catch up (Redis 7), as a
			// planned failover does; the master then exits.
			c := goredis.NewClient(&goredis.Options{Addr: master.addr()})
			defer c.Close()
			_ = c.Shutdown(ctx).Err() // the connection closes: no reply
			for range master.lines {
			}
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			timeout := time.After(serverLimit)
			for {
				addr, err := sc.GetMasterAddrByName(ctx, "deployer").Result()
				if err == nil && len(addr) == 2 && addr[1] == fmt.Sprint(replica.port) {
					return
				}
				select {
				case <-tick.C:
				case <-timeout:
					t.Errorf("Sentinel did not promote the replica within %s", serverLimit)
					return
				}
			}
		}})
	// go-redis's own retries sometimes bridge the whole failover, so the
	// workers need not have seen an error; Disrupt checked that the replica
	// was promoted, and two thirds of the sections ran after the shutdown.
	t.Logf("%d sections, %d failures waited out", res.Sections, res.Retried)
}

// The same storm against a 3-node Redis Cluster (redis-cli --cluster
// create), with the conformance suite: records and their queue spread over
// the nodes.
func TestCluster(t *testing.T) {
	bin := testenv.Require(t, testenv.RedisServer, "redis-server")
	cli, err := exec.LookPath(filepath.Join(filepath.Dir(bin), "redis-cli"))
	if err != nil {
		cli, err = exec.LookPath("redis-cli")
		testenv.RequirePlatform(t, err == nil, "redis-cli is not installed (apt-get install redis-tools)")
	}
	var nodes []*server
	var addrs []string
	for range 3 {
		n := startRedis(t, bin, false, "cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 5000")
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr())
	}
	out, err := exec.Command(cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx := context.Background()
	for _, n := range nodes {
		c := goredis.NewClient(&goredis.Options{Addr: n.addr()})
		poll(t, "cluster_state:ok on "+n.addr(), func() error {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("%q, %v", info, err)
			}
			return nil
		})
		c.Close()
	}
	url := fmt.Sprintf("redis://%s?addr=%s&addr=%s&key_prefix=%s", addrs[0], addrs[1], addrs[2], namespace(t))
	open := func(t *testing.T) lockmgr.Backend {
		b, err := redis.Open(ctx, url)
		if err != nil {
			t.Fatalf("open redis backend on the cluster: %v", err)
		}
		return b
	}
	t.Run("Conformance", func(t *testing.T) { locktest.Run(t, open) })
	t.Run("Storm", func(t *testing.T) {
		locktest.Storm(t, open, locktest.StormConfig{Workers: 8, Cycles: locktest.StormCycles(30), Section: 5 * time.Millisecond})
	})
}

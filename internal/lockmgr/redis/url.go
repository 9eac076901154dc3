package redis

import (
	"fmt"
	"net/url"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/deployer-dev/deployer/internal/backendurl"
)

// Options configure a Backend beyond its URL.
type Options struct {
	// Namespace starts every key the backend writes: records are
	// "{Namespace}:lock:{<lockKey>}", fence counters "{Namespace}:fence:{<lockKey>}".
	// Default "deployer". The URL's key_prefix parameter sets it too.
	Namespace string
}

// ParseURL turns a redis:// or rediss:// URL into go-redis UniversalOptions
// and the key namespace. Besides go-redis's own parameters (ParseURL: db,
// dial_timeout, pool_size, skip_verify, ...) it reads:
//
//	addr=HOST:PORT    more seed addresses (repeatable): a Cluster, or Sentinels
//	master_name=NAME  the Sentinel master: the addresses are Sentinels
//	cluster=true      Cluster mode with a single configuration endpoint
//	key_prefix=NAME   the key namespace (default "deployer")
//
// Examples: redis://:pw@10.0.0.1:6379/0, rediss://cache.example.com:6380,
// redis://10.0.0.1:26379?master_name=mymaster&addr=10.0.0.2:26379,
// redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000.
func ParseURL(raw string) (*goredis.UniversalOptions, string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return nil, "", fmt.Errorf("lock backend %q: want redis://[:PASSWORD@]HOST:PORT[/DB] or rediss://HOST:PORT", backendurl.Redact(raw))
	}
	q := u.Query()
	extra := q["addr"]
	master := q.Get("master_name")
	cluster := q.Get("cluster")
	ns := q.Get("key_prefix")
	for _, k := range []string{"addr", "master_name", "cluster", "key_prefix"} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	o, err := goredis.ParseURL(u.String())
	if err != nil {
		return nil, "", fmt.Errorf("lock backend %q: %w", backendurl.Redact(raw), err)
	}
	if ns == "" {
		ns = "deployer"
	}
	if strings.ContainsAny(ns, "{}*?[]\\") {
		return nil, "", fmt.Errorf("lock backend %q: key_prefix %q may not contain {}*?[]\\", backendurl.Redact(raw), ns)
	}
	isCluster := false
	switch cluster {
	case "", "false", "0":
	case "true", "1":
		isCluster = true
	default:
		return nil, "", fmt.Errorf("lock backend %q: cluster=%q, want true or false", backendurl.Redact(raw), cluster)
	}
	uo := &goredis.UniversalOptions{
		Addrs:           append([]string{o.Addr}, extra...),
		ClientName:      o.ClientName,
		DB:              o.DB,
		Protocol:        o.Protocol,
		Username:        o.Username,
		Password:        o.Password,
		MaxRetries:      o.MaxRetries,
		MinRetryBackoff: o.MinRetryBackoff,
		MaxRetryBackoff: o.MaxRetryBackoff,
		DialTimeout:     o.DialTimeout,
		ReadTimeout:     o.ReadTimeout,
		WriteTimeout:    o.WriteTimeout,
		PoolFIFO:        o.PoolFIFO,
		PoolSize:        o.PoolSize,
		PoolTimeout:     o.PoolTimeout,
		MinIdleConns:    o.MinIdleConns,
		MaxIdleConns:    o.MaxIdleConns,
		MaxActiveConns:  o.MaxActiveConns,
		ConnMaxIdleTime: o.ConnMaxIdleTime,
		ConnMaxLifetime: o.ConnMaxLifetime,
		TLSConfig:       o.TLSConfig,
		MasterName:      master,
		IsClusterMode:   isCluster,
	}
	if master != "" {
		// With Sentinel the URL's credentials are the master's; Sentinels
		// commonly share them.
		uo.SentinelUsername, uo.SentinelPassword = o.Username, o.Password
	}
	return uo, ns, nil
}

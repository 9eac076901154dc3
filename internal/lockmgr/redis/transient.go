package redis

import (
	"context"
	"errors"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// passingReplies are the Redis error replies of a failover, a restart or a
// resharding: the same call succeeds once the cluster settles.
var passingReplies = []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "NOREPLICAS", "MOVED", "ASK"}

var _ lockmgr.TransientChecker = (*Backend)(nil)

// Transient reports the passing failures of Redis, Sentinel and Cluster:
// the replies above, no reachable Sentinel or master, an exhausted
// connection pool (docs/locking.md, "Backend failures while waiting").
func (b *Backend) Transient(err error) bool {
	var re goredis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, p := range passingReplies {
			if strings.HasPrefix(msg, p+" ") || msg == p {
				return true
			}
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "redis: all sentinels specified in configuration are unreachable") ||
		strings.Contains(msg, "redis: cluster has no nodes") ||
		strings.Contains(msg, "redis: connection pool timeout")
}

var _ lockmgr.Notifier = (*Backend)(nil)

// releasedChannel is the pub/sub channel the release script announces
// released keys on: "{ns}:released".
func (b *Backend) releasedChannel() string { return b.ns + ":released" }

// Watch implements lockmgr.Notifier with a SUBSCRIBE to the released channel
// (the release script PUBLISHes each released key). Messages published while
// the subscription reconnects are lost; waiters also poll.
func (b *Backend) Watch(ctx context.Context) (<-chan string, error) {
	ps := b.c.Subscribe(ctx, b.releasedChannel())
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, err
	}
	out := make(chan string, 64)
	go func() {
		defer close(out)
		defer ps.Close()
		in := ps.Channel()
		for {
			select {
			case <-ctx.Done():
				return
			case msg, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- msg.Payload:
				default: // the waiter is busy: it looks again anyway
				}
			}
		}
	}()
	return out, nil
}

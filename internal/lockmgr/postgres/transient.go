package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

var _ lockmgr.TransientChecker = (*Backend)(nil)

// Transient reports PostgreSQL's passing failures (docs/locking.md, "Backend
// failures while waiting"): a connection that could not be made or broke
// (SQLSTATE class 08), a server shutting down, crashing or starting up
// (57P01, 57P02, 57P03), too many connections (53300), a serialization
// failure or deadlock (40001, 40P01), and connection attempts that failed
// for one of these reasons or on the network.
func (b *Backend) Transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		c := pgErr.Code
		return strings.HasPrefix(c, "08") || c == "57P01" || c == "57P02" || c == "57P03" ||
			c == "53300" || c == "40001" || c == "40P01"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true // refused, reset, or the answers above while connecting
	}
	return pgconn.Timeout(err) || pgconn.SafeToRetry(err) || lockmgr.NetworkError(err) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "unexpected EOF")
}

// notifyChannel is the LISTEN/NOTIFY channel releases are announced on.
const notifyChannel = "deployer_locks_released"

// announce tells waiters that key was released (best effort: they poll too).
func (b *Backend) announce(ctx context.Context, key string) {
	_, _ = b.pool.Exec(ctx, `SELECT pg_notify('`+notifyChannel+`', $1)`, key)
}

var _ lockmgr.Notifier = (*Backend)(nil)

// Watch implements lockmgr.Notifier: LISTEN on a connection of its own (not
// the pool's), forwarding each announced key until ctx ends.
func (b *Backend) Watch(ctx context.Context) (<-chan string, error) {
	conn, err := pgx.ConnectConfig(ctx, b.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("listen for lock releases: %w", err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+notifyChannel); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("listen for lock releases: %w", err)
	}
	out := make(chan string, 64)
	go func() {
		defer close(out)
		defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing a listener
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return // ctx ended or the connection broke: the waiter polls
			}
			select {
			case out <- n.Payload:
			default:
			}
		}
	}()
	return out, nil
}

var _ lockmgr.Remover = (*Backend)(nil)

// Remove implements lockmgr.Remover: deletes the row of key (wait-queue
// records only; lock rows keep their tombstone for the fence).
func (b *Backend) Remove(ctx context.Context, key string) error {
	if err := b.ensure(ctx, "remove "+key); err != nil {
		return err
	}
	if _, err := b.pool.Exec(ctx, `DELETE FROM deployer_locks WHERE lock_key = $1`, key); err != nil {
		return fmt.Errorf("remove %s from postgres: %w", key, err)
	}
	b.announce(ctx, key)
	return nil
}

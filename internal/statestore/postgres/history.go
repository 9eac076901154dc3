package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// History implements statestore.Backend from deployer_state_events, newest
// serial first; limit <= 0 lists all.
func (b *Backend) History(ctx context.Context, stack, env string, limit int) ([]statestore.SnapshotInfo, error) {
	op := "list history of " + b.Location(stack, env)
	if err := b.ensure(ctx, op); err != nil {
		return nil, err
	}
	q := `SELECT serial, created_at FROM deployer_state_events WHERE stack = $1 AND env = $2 ORDER BY serial DESC`
	args := []any{stack, env}
	if limit > 0 {
		q += ` LIMIT $3`
		args = append(args, limit)
	}
	rows, err := b.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var out []statestore.SnapshotInfo
	var (
		serial int64
		at     time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&serial, &at}, func() error {
		at = at.UTC().Truncate(time.Millisecond) // the precision of snapshot names
		out = append(out, statestore.SnapshotInfo{Serial: serial, Time: at, Name: statestore.SnapshotName(at, serial)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// ReadSnapshot implements statestore.Backend: the exact document bytes of the
// event with serial; ErrNotFound if there is none.
func (b *Backend) ReadSnapshot(ctx context.Context, stack, env string, serial int64) ([]byte, error) {
	op := fmt.Sprintf("read snapshot %d of %s", serial, b.Location(stack, env))
	if err := b.ensure(ctx, op); err != nil {
		return nil, err
	}
	var doc []byte
	err := b.pool.QueryRow(ctx, `SELECT document FROM deployer_state_events
		WHERE stack = $1 AND env = $2 AND serial = $3`, stack, env, serial).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", op, statestore.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return doc, nil
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// ListSnapshots implements statestore.Backend from deployer_state_events:
// one snapshot per serial (the event and state.json are written in one
// transaction), in no particular order; statestore.Store orders them.
func (b *Backend) ListSnapshots(ctx context.Context, stack, env string) ([]statestore.SnapshotInfo, error) {
	op := "list history of " + b.Location(stack, env)
	if err := b.ensure(ctx, op); err != nil {
		return nil, err
	}
	rows, err := b.pool.Query(ctx, `SELECT serial, created_at FROM deployer_state_events WHERE stack = $1 AND env = $2`, stack, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	out := []statestore.SnapshotInfo{}
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
// event of sn.Serial (the only one of that serial); ErrNotFound if there is
// none.
func (b *Backend) ReadSnapshot(ctx context.Context, stack, env string, sn statestore.SnapshotInfo) ([]byte, error) {
	serial := sn.Serial
	op := fmt.Sprintf("read snapshot %d of %s", serial, b.Location(stack, env))
	if err := b.ensure(ctx, op); err != nil {
		return nil, err
	}
	var (
		doc  []byte
		size int64
	)
	// The size first: a document over the limit is never sent.
	err := b.pool.QueryRow(ctx, `SELECT length(document)::bigint, CASE WHEN length(document) <= $4 THEN document END
		FROM deployer_state_events WHERE stack = $1 AND env = $2 AND serial = $3`,
		stack, env, serial, statestore.ReadLimit(ctx)).Scan(&size, &doc)
	if err == nil {
		err = statestore.CheckReadSize(ctx, op, size)
		var tl *statestore.TooLargeError
		if errors.As(err, &tl) {
			return nil, err
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", op, statestore.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return doc, nil
}

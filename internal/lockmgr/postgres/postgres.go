package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/pgschema"
)

// Backend is the PostgreSQL lock backend. Safe for concurrent use.
type Backend struct {
	pool    *pgxpool.Pool
	ownPool bool
	schema  pgschema.Gate
}

var _ lockmgr.Backend = (*Backend)(nil)

// Open connects a pool to rawURL (postgres://USER[:PASSWORD]@HOST:PORT/DB?...,
// as pgx reads it; add default_query_exec_mode=exec behind PgBouncer in
// transaction mode). The schema is checked on first use, not here.
func Open(ctx context.Context, rawURL string) (*Backend, error) {
	pool, err := pgxpool.New(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("lock backend %s: %w", backendurl.Redact(rawURL), err)
	}
	b := New(pool)
	b.ownPool = true
	return b, nil
}

// New uses an existing pool (shared with the postgres state backend); Close
// then leaves the pool open.
func New(pool *pgxpool.Pool) *Backend { return &Backend{pool: pool} }

// ensure runs pgschema.Check once per Backend (until it succeeds).
func (b *Backend) ensure(ctx context.Context, op string) error {
	return b.schema.Ensure(ctx, b.pool, op)
}

const columns = `lock_key, lock_id, locked_by, locked_at, expires_at, last_heartbeat, metadata, fence`

// selectRecords reads rows bounded (docs/locking.md, "Record size"): each
// row's size (its text columns and its metadata as JSON text, in bytes)
// comes first, and a row over lockmgr.MaxRecordBytes sends only the first
// 200 characters of its key, never its values.
var selectRecords = fmt.Sprintf(`SELECT s.size,
	CASE WHEN s.size > %[1]d THEN left(l.lock_key, 200) ELSE l.lock_key END,
	CASE WHEN s.size > %[1]d THEN '' ELSE l.lock_id END,
	CASE WHEN s.size > %[1]d THEN '' ELSE l.locked_by END,
	l.locked_at, l.expires_at, l.last_heartbeat,
	CASE WHEN s.size > %[1]d THEN '{}'::jsonb ELSE l.metadata END,
	l.fence
FROM deployer_locks l CROSS JOIN LATERAL (SELECT octet_length(l.lock_key) + octet_length(l.lock_id) +
	octet_length(l.locked_by) + octet_length(l.metadata::text) AS size) s`, lockmgr.MaxRecordBytes)

// acquireSQL is the one conditional write of the lock protocol
// (docs/locking.md): insert, or take over a row whose expires_at is before the
// newcomer's locked_at (a released row has expires_at 0). The fence of a
// takeover is drawn inside the UPDATE, under the row lock, so it is ordered
// after every earlier holder of the key even when the caller stalled between
// sending the statement and its execution; the VALUES fence is used only by
// the first acquisition of a key ever, when no earlier fence exists. Rows are
// never deleted (Release leaves a tombstone), so a takeover always takes the
// UPDATE path.
const acquireSQL = `INSERT INTO deployer_locks AS l (` + columns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, nextval('deployer_lock_fence'))
ON CONFLICT (lock_key) DO UPDATE SET
	lock_id = EXCLUDED.lock_id, locked_by = EXCLUDED.locked_by, locked_at = EXCLUDED.locked_at,
	expires_at = EXCLUDED.expires_at, last_heartbeat = EXCLUDED.last_heartbeat,
	metadata = EXCLUDED.metadata, fence = nextval('deployer_lock_fence')
WHERE l.expires_at < EXCLUDED.locked_at
RETURNING fence`

// live selects the rows that hold (or held, until taken over) a lock: a
// released row is a tombstone with an empty lock_id, kept for its fence.
const live = `lock_id <> ''`

// TryAcquire implements lockmgr.Backend: one INSERT ... ON CONFLICT DO UPDATE
// WHERE expired; when no row comes back the live holder is read and returned
// as *HeldError (if the holder released in between, the insert is retried).
func (b *Backend) TryAcquire(ctx context.Context, rec lockmgr.Record) (lockmgr.Record, error) {
	op := "acquire lock " + rec.LockKey
	if err := b.ensure(ctx, op); err != nil {
		return lockmgr.Record{}, err
	}
	meta, err := json.Marshal(rec.Metadata)
	if err != nil {
		return lockmgr.Record{}, fmt.Errorf("%s: encode metadata: %w", op, err)
	}
	for range 5 {
		var fence int64
		err := b.pool.QueryRow(ctx, acquireSQL, rec.LockKey, rec.LockID, rec.LockedBy,
			rec.LockedAt, rec.ExpiresAt, rec.LastHeartbeat, meta).Scan(&fence)
		if err == nil {
			rec.Fence = fence
			return rec, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			if !ambiguous(ctx, err) {
				return lockmgr.Record{}, fmt.Errorf("%s in postgres: %w", op, err)
			}
			// The connection broke with no answer: the INSERT may have
			// committed. Our lockId on the row says it did; otherwise the
			// conditional INSERT is safe to try again.
		}
		holder, gerr := b.Get(ctx, rec.LockKey)
		if gerr == nil && holder.LockID == rec.LockID {
			return holder, nil
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			if gerr != nil && !errors.Is(gerr, lockmgr.ErrNotFound) {
				return lockmgr.Record{}, fmt.Errorf("%s in postgres: %w", op, err)
			}
			continue
		}
		err = gerr
		if errors.Is(err, lockmgr.ErrNotFound) {
			continue // released between the insert and the read: try again
		}
		if err != nil {
			return lockmgr.Record{}, fmt.Errorf("%s: read holder: %w", op, err)
		}
		return lockmgr.Record{}, &lockmgr.HeldError{Record: holder}
	}
	return lockmgr.Record{}, fmt.Errorf("%s: the key changed hands 5 times in a row: try again", op)
}

// Heartbeat implements lockmgr.Backend: sets last_heartbeat=at and expires_at
// iff lock_id matches; ErrLockLost otherwise.
func (b *Backend) Heartbeat(ctx context.Context, key, lockID string, at, expiresAt time.Time) error {
	op := "heartbeat lock " + key
	if err := b.ensure(ctx, op); err != nil {
		return err
	}
	tag, err := b.pool.Exec(ctx, `UPDATE deployer_locks SET last_heartbeat = $3, expires_at = $4
		WHERE lock_key = $1 AND lock_id = $2`, key, lockID, at.Unix(), expiresAt.Unix())
	if err != nil && ambiguous(ctx, err) {
		// No answer: the UPDATE may have committed. It is idempotent.
		tag, err = b.pool.Exec(ctx, `UPDATE deployer_locks SET last_heartbeat = $3, expires_at = $4
			WHERE lock_key = $1 AND lock_id = $2`, key, lockID, at.Unix(), expiresAt.Unix())
	}
	if err != nil {
		return fmt.Errorf("%s in postgres: %w", op, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("%s (lock id %s): %w", op, lockID, lockmgr.ErrLockLost)
	}
	return nil
}

// Release implements lockmgr.Backend: turns the row into a tombstone (empty
// lock_id, expires_at 0) iff lock_id matches; ErrLockLost otherwise. The row
// stays so the next acquisition of the key draws its fence under the row lock.
func (b *Backend) Release(ctx context.Context, key, lockID string) error {
	op := "release lock " + key
	if err := b.ensure(ctx, op); err != nil {
		return err
	}
	// The release and its announcement in one round trip; NOTIFY is
	// delivered when the UPDATE commits.
	const releaseSQL = `WITH released AS (UPDATE deployer_locks SET lock_id = '', expires_at = 0
		WHERE lock_key = $1 AND lock_id = $2 RETURNING lock_key)
		SELECT pg_notify('` + notifyChannel + `', lock_key) FROM released`
	tag, err := b.pool.Exec(ctx, releaseSQL, key, lockID)
	if err != nil && ambiguous(ctx, err) {
		// No answer: the UPDATE may have committed. Our row still live
		// means it did not (release it now); no live row is our release
		// (docs/locking.md, "Lost replies").
		held, gerr := b.Get(ctx, key)
		switch {
		case errors.Is(gerr, lockmgr.ErrNotFound):
			return nil
		case gerr == nil && held.LockID == lockID:
			tag, err = b.pool.Exec(ctx, releaseSQL, key, lockID)
		case gerr == nil:
			return fmt.Errorf("%s (lock id %s): %w", op, lockID, lockmgr.ErrLockLost)
		}
	}
	if err != nil {
		return fmt.Errorf("%s in postgres: %w", op, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("%s (lock id %s): %w", op, lockID, lockmgr.ErrLockLost)
	}
	return nil
}

// ambiguous reports an error that left a write's outcome unknown: the
// connection broke before the server answered (it may have committed), as
// opposed to an answer from the server or our own context ending.
func ambiguous(ctx context.Context, err error) bool {
	var pgErr *pgconn.PgError
	return !errors.As(err, &pgErr) && ctx.Err() == nil
}

// Get implements lockmgr.Backend; ErrNotFound when no row exists or the row
// is a released tombstone.
func (b *Backend) Get(ctx context.Context, key string) (lockmgr.Record, error) {
	op := "read lock " + key
	if err := b.ensure(ctx, op); err != nil {
		return lockmgr.Record{}, err
	}
	rows, err := b.pool.Query(ctx, selectRecords+` WHERE lock_key = $1 AND `+live, key)
	if err != nil {
		return lockmgr.Record{}, fmt.Errorf("%s from postgres: %w", op, err)
	}
	recs, err := scan(rows)
	if err != nil {
		return lockmgr.Record{}, fmt.Errorf("%s from postgres: %w", op, err)
	}
	if len(recs) == 0 {
		return lockmgr.Record{}, fmt.Errorf("%s: %w", op, lockmgr.ErrNotFound)
	}
	return recs[0], nil
}

// List implements lockmgr.Backend: every row whose key starts with prefix,
// expired ones included and released tombstones left out, in byte order of
// the key.
func (b *Backend) List(ctx context.Context, prefix string) ([]lockmgr.Record, error) {
	op := fmt.Sprintf("list locks %q", prefix)
	if err := b.ensure(ctx, op); err != nil {
		return nil, err
	}
	rows, err := b.pool.Query(ctx, selectRecords+`
		WHERE starts_with(lock_key, $1) AND `+live+` ORDER BY lock_key COLLATE "C"`, prefix)
	if err != nil {
		return nil, fmt.Errorf("%s from postgres: %w", op, err)
	}
	recs, err := scan(rows)
	if err != nil {
		return nil, fmt.Errorf("%s from postgres: %w", op, err)
	}
	return recs, nil
}

// removeSQL is the statement that deletes the oversized row of key, whose
// first 200 characters are all selectRecords sends of it.
func removeSQL(key string) string {
	if utf8.RuneCountInString(key) < 200 {
		return fmt.Sprintf("DELETE FROM deployer_locks WHERE lock_key = '%s'", strings.ReplaceAll(key, "'", "''"))
	}
	return fmt.Sprintf("DELETE FROM deployer_locks WHERE octet_length(lock_key) + octet_length(lock_id) + octet_length(locked_by) + octet_length(metadata::text) > %d", lockmgr.MaxRecordBytes)
}

func scan(rows pgx.Rows) ([]lockmgr.Record, error) {
	defer rows.Close()
	var recs []lockmgr.Record
	for rows.Next() {
		var (
			r    lockmgr.Record
			meta []byte
			size int64
		)
		if err := rows.Scan(&size, &r.LockKey, &r.LockID, &r.LockedBy, &r.LockedAt, &r.ExpiresAt,
			&r.LastHeartbeat, &meta, &r.Fence); err != nil {
			return nil, err
		}
		if size > lockmgr.MaxRecordBytes {
			return nil, lockmgr.TooLarge(r.LockKey, "its row in deployer_locks", removeSQL(r.LockKey), size)
		}
		if err := json.Unmarshal(meta, &r.Metadata); err != nil {
			return nil, fmt.Errorf("metadata of %s: %w", r.LockKey, err)
		}
		recs = append(recs, r)
	}
	return recs, rows.Err()
}

// Close closes the pool if Open made it; it does not release locks.
func (b *Backend) Close() error {
	if b.ownPool {
		b.pool.Close()
	}
	return nil
}

var _ lockmgr.ServerClock = (*Backend)(nil)

// ServerTime returns PostgreSQL's now() (clock_timestamp(), the time of the
// call rather than of the transaction's start).
func (b *Backend) ServerTime(ctx context.Context) (time.Time, error) {
	var t time.Time
	if err := b.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("read postgres clock: %w", err)
	}
	return t, nil
}

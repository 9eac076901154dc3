package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/pgschema"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Options configure a Backend.
type Options struct {
	// CheckLock: the lock backend is this same database (backend.lock and
	// backend.state are the same postgres:// URL). Then a Write with
	// req.Lock set commits only if deployer_locks holds req.Lock.Key with
	// req.Lock.LockID and an expires_at not before Now (the coordinated update).
	CheckLock bool
	// Now is the clock the lock check compares expires_at with; default time.Now.
	Now func() time.Time
}

// Backend is the PostgreSQL state backend. Safe for concurrent use.
type Backend struct {
	pool    *pgxpool.Pool
	ownPool bool
	o       Options
	where   string // "postgres://host[:port]/db", no credentials
	schema  pgschema.Gate
}

var _ statestore.Backend = (*Backend)(nil)

// Open connects a pool to rawURL (postgres://USER[:PASSWORD]@HOST:PORT/DB?...).
// The schema is checked on first use, not here.
func Open(ctx context.Context, rawURL string, o Options) (*Backend, error) {
	pool, err := pgxpool.New(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("state backend %s: %w", backendurl.Redact(rawURL), err)
	}
	b := New(pool, o)
	b.ownPool = true
	return b, nil
}

// New uses an existing pool (it may be shared with the postgres lock
// backend); Close then leaves the pool open.
func New(pool *pgxpool.Pool, o Options) *Backend {
	if o.Now == nil {
		o.Now = time.Now
	}
	cc := pool.Config().ConnConfig
	host := cc.Host
	if cc.Port != 0 && cc.Port != 5432 {
		host = fmt.Sprintf("%s:%d", cc.Host, cc.Port)
	}
	return &Backend{pool: pool, o: o, where: "postgres://" + host + "/" + cc.Database}
}

// Location implements statestore.Backend: "postgres://host/db (stack/env)".
func (b *Backend) Location(stack, env string) string {
	return fmt.Sprintf("%s (%s/%s)", b.where, stack, env)
}

func (b *Backend) ensure(ctx context.Context, op string) error {
	return b.schema.Ensure(ctx, b.pool, op)
}

// Read implements statestore.Backend: the exact bytes last written and the
// row version as Version; ErrNotFound when stack/env has no state.
func (b *Backend) Read(ctx context.Context, stack, env string) ([]byte, statestore.Version, error) {
	op := "read state " + b.Location(stack, env)
	if err := b.ensure(ctx, op); err != nil {
		return nil, "", err
	}
	doc, version, err := readDocument(ctx, b.pool, stack, env)
	if errors.Is(err, statestore.ErrNotFound) {
		return nil, "", fmt.Errorf("%s: %w", op, statestore.ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", op, err)
	}
	return doc, statestore.Version(strconv.FormatInt(version, 10)), nil
}

// ReadVersion returns the row version of the state of stack/env without
// its document (statestore.VersionReader): the Version Read gives;
// statestore.ErrNotFound (wrapped) when there is none.
func (b *Backend) ReadVersion(ctx context.Context, stack, env string) (statestore.Version, error) {
	op := "read the state version of " + b.Location(stack, env)
	if err := b.ensure(ctx, op); err != nil {
		return "", err
	}
	var version int64
	err := b.pool.QueryRow(ctx, `SELECT version FROM deployer_state WHERE stack = $1 AND env = $2`, stack, env).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("%s: %w", op, statestore.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return statestore.Version(strconv.FormatInt(version, 10)), nil
}

var _ statestore.VersionReader = (*Backend)(nil)

// readChunk is the size, in bytes, of the pieces readDocument reads a
// document in.
const readChunk = 1 << 20

// readDocument reads the document and version of the state row of
// stack/env; an error wrapping statestore.ErrNotFound when there is none.
// One statement (one snapshot) returns the document in pieces of readChunk
// bytes, each with its offset, copied into one buffer of the document's
// size: a row as large as the document would be received into a pooled
// buffer of the next power of two and then copied (three times the
// document's size in memory instead of one).
func readDocument(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, stack, env string) ([]byte, int64, error) {
	// The subquery detoasts (decompresses) the document once, and each piece
	// is a slice of that value: pieces taken from the stored value would
	// each decompress it up to their end, quadratic in its size.
	rows, err := q.Query(ctx, `SELECT s.version, length(s.document)::bigint, g::bigint, substring(s.document FROM g FOR $3)
		FROM (SELECT version, document || ''::bytea AS document FROM deployer_state
			WHERE stack = $1 AND env = $2 OFFSET 0) s
		LEFT JOIN LATERAL generate_series(1, length(s.document), $3) g ON true`, stack, env, readChunk)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var (
		doc     []byte
		version int64
		n, got  int
	)
	for ; rows.Next(); n++ {
		var (
			v, size int64
			offset  *int64
			chunk   pgtype.DriverBytes // valid until the next row: copied below
		)
		if err := rows.Scan(&v, &size, &offset, &chunk); err != nil {
			return nil, 0, err
		}
		if n == 0 {
			if err := statestore.CheckReadSize(ctx, "the state row of "+stack+"/"+env, size); err != nil {
				return nil, 0, err // before the document's buffer is made
			}
			version, doc = v, make([]byte, size)
		}
		if offset == nil { // an empty document
			continue
		}
		at := *offset - 1
		if v != version || size != int64(len(doc)) || at < 0 || at+int64(len(chunk)) > size {
			return nil, 0, fmt.Errorf("read state in pieces: piece at offset %d (%d bytes, row version %d) does not fit the document of %d bytes (version %d)",
				at, len(chunk), v, len(doc), version)
		}
		got += copy(doc[at:], chunk)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if n == 0 {
		return nil, 0, statestore.ErrNotFound
	}
	if got != len(doc) {
		return nil, 0, fmt.Errorf("read state in pieces: got %d of %d bytes", got, len(doc))
	}
	return doc, version, nil
}

// Write implements statestore.Backend in one transaction: the lock check
// (with CheckLock and req.Lock), the compare-and-swap of deployer_state on
// req.Prev, then the history event. Errors: *statestore.ConflictError when
// Prev is stale or the serial is already in the history; an error wrapping
// statestore.ErrLeaseLost when the lock row is gone, taken over or expired.
// Nothing is written on any error. (The state row is updated first so that
// a concurrent writer queues on the row lock and then fails the
// compare-and-swap; the event is inserted next, and the row's document is
// copied from it: inside one transaction the order is invisible.)
func (b *Backend) Write(ctx context.Context, req statestore.WriteRequest) (statestore.Version, error) {
	loc := b.Location(req.Stack, req.Env)
	op := "write state " + loc
	if err := b.ensure(ctx, op); err != nil {
		return "", err
	}
	var prev int64
	if req.Prev != "" {
		var err error
		if prev, err = strconv.ParseInt(string(req.Prev), 10, 64); err != nil {
			return "", &statestore.ConflictError{Location: loc, Reason: fmt.Sprintf("version %q was not read from this postgres backend", req.Prev)}
		}
	}
	var version int64
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if req.Lock != nil && b.o.CheckLock {
			if err := checkLock(ctx, tx, *req.Lock, b.o.Now()); err != nil {
				return err
			}
		}
		var err error
		if version, err = swap(ctx, tx, req, prev, loc); err != nil {
			return err
		}
		if err := appendEvent(ctx, tx, req, loc); err != nil {
			return err
		}
		return setDocument(ctx, tx, req)
	})
	if err != nil {
		var ce *statestore.ConflictError
		if errors.As(err, &ce) || errors.Is(err, statestore.ErrLeaseLost) {
			return "", err
		}
		if v, ok := b.committed(ctx, err, req); ok {
			return v, nil
		}
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return statestore.Version(strconv.FormatInt(version, 10)), nil
}

// committed resolves a write that failed without an answer from the server
// (the connection broke, perhaps after COMMIT reached it): if the state row
// now holds exactly req.Document, the transaction committed and its
// acknowledgement was lost, so the write is ours (docs/backends.md, "Lost
// replies"). The document names its serial, lineage, deployment and
// checksums, so equal bytes are no one else's write.
func (b *Backend) committed(ctx context.Context, err error, req statestore.WriteRequest) (statestore.Version, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || ctx.Err() != nil {
		return "", false // the server answered, or we gave up: not ambiguous
	}
	doc, version, err := readDocument(ctx, b.pool, req.Stack, req.Env)
	if err != nil {
		return "", false
	}
	if !bytes.Equal(doc, req.Document) {
		return "", false
	}
	return statestore.Version(strconv.FormatInt(version, 10)), true
}

// checkLock is the coordinated update: the writer's lock row must be
// there, with its lock_id, not expired. FOR SHARE keeps a takeover from
// committing until this transaction ends.
func checkLock(ctx context.Context, tx pgx.Tx, l statestore.LockRef, now time.Time) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM deployer_locks
		WHERE lock_key = $1 AND lock_id = $2 AND expires_at >= $3 FOR SHARE`,
		l.Key, l.LockID, now.Unix()).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("state not written: lock %s (lock id %s) is no longer held, released, expired or taken over; nothing was changed, deploy again under a new lock: %w",
			l.Key, l.LockID, statestore.ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("check lock %s: %w", l.Key, err)
	}
	return nil
}

// swap writes the row of deployer_state (all but its document, which
// setDocument copies from the history event) iff its version is prev (or no
// row exists when req.Prev is ""), and returns the new version. Taking the
// row first makes a concurrent writer queue on its lock and then fail the
// compare-and-swap.
func swap(ctx context.Context, tx pgx.Tx, req statestore.WriteRequest, prev int64, loc string) (int64, error) {
	var version int64
	if req.Prev == "" {
		tag, err := tx.Exec(ctx, `INSERT INTO deployer_state (stack, env, serial, lineage, version, document, updated_at)
			VALUES ($1, $2, $3, $4, 1, ''::bytea, $5) ON CONFLICT (stack, env) DO NOTHING`,
			req.Stack, req.Env, req.Serial, req.Lineage, req.Time)
		if err != nil {
			return 0, fmt.Errorf("insert state: %w", err)
		}
		if tag.RowsAffected() != 1 {
			return 0, &statestore.ConflictError{Location: loc, Reason: "state was created by someone else since it was read (it did not exist then)"}
		}
		return 1, nil
	}
	err := tx.QueryRow(ctx, `UPDATE deployer_state SET serial = $3, lineage = $4, version = version + 1, updated_at = $5
		WHERE stack = $1 AND env = $2 AND version = $6 RETURNING version`,
		req.Stack, req.Env, req.Serial, req.Lineage, req.Time, prev).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, &statestore.ConflictError{Location: loc, Reason: "state was written by someone else since it was read"}
	}
	if err != nil {
		return 0, fmt.Errorf("update state: %w", err)
	}
	return version, nil
}

// appendEvent inserts the history event of req: correlation id = deployment
// id, causation id = the deployment id of the newest earlier event (NULL for
// the first). The row goes through COPY, which streams the document from
// req.Document in small messages instead of building a Bind message (and an
// encoded parameter) as large as the document; it crosses the network once.
func appendEvent(ctx context.Context, tx pgx.Tx, req statestore.WriteRequest, loc string) error {
	var causation *string
	err := tx.QueryRow(ctx, `SELECT deployment_id FROM deployer_state_events
		WHERE stack = $1 AND env = $2 AND serial < $3 ORDER BY serial DESC LIMIT 1`,
		req.Stack, req.Env, req.Serial).Scan(&causation)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("append history event: %w", err)
	}
	row, err := eventCopy(req, causation)
	if err != nil {
		return fmt.Errorf("append history event: %w", err)
	}
	_, err = tx.Conn().PgConn().CopyFrom(ctx, row, `COPY deployer_state_events
		(stack, env, serial, lineage, deployment_id, correlation_id, causation_id, created_at, document)
		FROM STDIN (FORMAT binary)`)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		return &statestore.ConflictError{Location: loc, Reason: fmt.Sprintf("the history already holds serial %d", req.Serial)}
	}
	if err != nil {
		return fmt.Errorf("append history event: %w", err)
	}
	return nil
}

// setDocument copies the document of the event appendEvent wrote into the
// state row swap wrote, server-side.
func setDocument(ctx context.Context, tx pgx.Tx, req statestore.WriteRequest) error {
	tag, err := tx.Exec(ctx, `UPDATE deployer_state s SET document = e.document
		FROM deployer_state_events e
		WHERE s.stack = $1 AND s.env = $2 AND e.stack = $1 AND e.env = $2 AND e.serial = $3`,
		req.Stack, req.Env, req.Serial)
	if err != nil {
		return fmt.Errorf("write state document: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("write state document: %d rows updated, want 1", tag.RowsAffected())
	}
	return nil
}

// Close closes the pool if Open made it.
func (b *Backend) Close() error {
	if b.ownPool {
		b.pool.Close()
	}
	return nil
}

package pgschema

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/golang-migrate/migrate/v4/database"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers the pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/deployer-dev/deployer/internal/backendurl"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Version is the schema version this deployer needs: the number of the newest
// embedded migration.
const Version = 1

// MigrationsTable is golang-migrate's bookkeeping table, named so that it does
// not collide with an application's own schema_migrations in the same database.
const MigrationsTable = "deployer_schema_migrations"

// ErrSchema is wrapped by every error Check returns.
var ErrSchema = errors.New("postgres schema is not ready")

// SchemaError says which version the database is at and which deployer needs.
type SchemaError struct {
	Have  int  // version found (0: no schema)
	Want  int  // Version
	Dirty bool // a migration failed half-way
}

func (e *SchemaError) Error() string {
	switch {
	case e.Dirty:
		return fmt.Sprintf("postgres schema is dirty at version %d (a migration failed half-way): fix the database by hand, then run deployer backend init", e.Have)
	case e.Have > e.Want:
		return fmt.Sprintf("postgres schema is at version %d, newer than this deployer knows (%d): upgrade deployer", e.Have, e.Want)
	}
	return fmt.Sprintf("postgres schema is at version %d, deployer needs %d: run deployer backend init", e.Have, e.Want)
}

// Fix is the message itself: the schema's state and what to run. The CLI
// puts it first (termui.Remedy), before the context it was found in.
func (e *SchemaError) Fix() string { return e.Error() }

// Unwrap makes errors.Is(err, ErrSchema) true.
func (e *SchemaError) Unwrap() error { return ErrSchema }

// Querier is the one pgx method Check needs; *pgxpool.Pool, *pgx.Conn and
// pgx.Tx have it.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Check reads the schema version through q. It returns nil when the database
// is at Version, a *SchemaError (wrapping ErrSchema) when the schema is
// missing, older, newer or dirty, and other errors wrapped with context when
// the query itself fails.
func Check(ctx context.Context, q Querier) error {
	var (
		version int64
		dirty   bool
	)
	err := q.QueryRow(ctx, "SELECT version, dirty FROM "+MigrationsTable+" LIMIT 1").Scan(&version, &dirty)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table
		return &SchemaError{Have: 0, Want: Version}
	case errors.Is(err, pgx.ErrNoRows):
		return &SchemaError{Have: 0, Want: Version}
	case err != nil && isConnectError(err):
		return fmt.Errorf("cannot connect to PostgreSQL (check that it runs there and that the URL's host, port, user, password, database and sslmode are right): %w", err)
	case err != nil:
		return fmt.Errorf("read postgres schema version: %w", err)
	}
	if dirty || int(version) != Version {
		return &SchemaError{Have: int(version), Want: Version, Dirty: dirty}
	}
	return nil
}

// isConnectError reports whether err is a failure to reach or log in to the
// server (refused, DNS, TLS, authentication), as opposed to a failed query.
func isConnectError(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}

// Init runs Migrate on the database of each URL, once per distinct URL
// (`deployer backend init`), and returns one line per migration applied,
// or one saying the schema is up to date, each naming the URL without its
// password: "postgres://deployer:xxxxx@db/deployer: applied migration 000001_init".
func Init(ctx context.Context, urls []string) ([]string, error) {
	var lines []string
	done := map[string]bool{}
	for _, u := range urls {
		if done[u] {
			continue
		}
		done[u] = true
		applied, err := Migrate(ctx, u)
		if err != nil {
			return lines, err
		}
		if len(applied) == 0 {
			lines = append(lines, backendurl.Redact(u)+": schema already up to date")
		}
		for _, m := range applied {
			lines = append(lines, backendurl.Redact(u)+": applied migration "+m)
		}
	}
	return lines, nil
}

// Migrate applies the embedded migrations that the database at rawURL
// (postgres:// or postgresql://, a libpq URL as pgx reads it) does not have
// yet, and returns their names ("000001_init"), oldest first; nil when the
// schema was already current. Tables go to the connection's current schema
// (set search_path in the URL to use another).
//
// It is safe to run concurrently: it holds golang-migrate's own PostgreSQL
// advisory lock from the version check to the last migration, so one caller
// applies and the others, waiting on the lock, then find the schema current.
// Dirty (a *SchemaError) is reported only when the version row says so under
// that lock: a migration really failed half-way. Run it against the server,
// not through PgBouncer in transaction mode (advisory locks are per session).
func Migrate(ctx context.Context, rawURL string) ([]string, error) {
	dbURL, err := driverURL(rawURL)
	if err != nil {
		return nil, err
	}
	src, err := iofs.New(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("open embedded migrations: %w", err)
	}
	defer src.Close()
	drv, err := database.Open(dbURL)
	if err != nil {
		return nil, fmt.Errorf("connect to %s for migrations: %w", backendurl.Redact(rawURL), err)
	}
	defer drv.Close()
	if err := drv.Lock(); err != nil {
		return nil, fmt.Errorf("take the migration lock of %s: %w", backendurl.Redact(rawURL), err)
	}
	defer func() { _ = drv.Unlock() }()

	before, dirty, err := drv.Version()
	if err != nil {
		return nil, fmt.Errorf("read schema version of %s: %w", backendurl.Redact(rawURL), err)
	}
	if dirty {
		return nil, &SchemaError{Have: before, Want: Version, Dirty: true}
	}
	if before > Version {
		return nil, &SchemaError{Have: before, Want: Version}
	}
	names, err := namesAfter(max(before, 0))
	if err != nil {
		return nil, err
	}
	v := before
	for range names {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("migrate %s: stopped at version %d: %w", backendurl.Redact(rawURL), max(v, 0), err)
		}
		var next uint
		if v == database.NilVersion {
			next, err = src.First()
		} else {
			next, err = src.Next(uint(v))
		}
		if err != nil {
			return nil, fmt.Errorf("find the migration after version %d: %w", max(v, 0), err)
		}
		if err := apply(drv, src, next); err != nil {
			return nil, fmt.Errorf("migrate %s from version %d to %d: %w", backendurl.Redact(rawURL), max(before, 0), Version, err)
		}
		v = int(next)
	}
	return names, nil
}

// apply runs the up migration of version n as golang-migrate's Up does: the
// version row is marked dirty before the script and clean after it, so a
// script that fails leaves it dirty.
func apply(drv database.Driver, src source.Driver, n uint) error {
	body, _, err := src.ReadUp(n)
	if err != nil {
		return fmt.Errorf("read migration %d: %w", n, err)
	}
	defer body.Close()
	if err := drv.SetVersion(int(n), true); err != nil {
		return err
	}
	if err := drv.Run(body); err != nil {
		return fmt.Errorf("migration %d failed: %w", n, err)
	}
	return drv.SetVersion(int(n), false)
}

// namesAfter lists the embedded up migrations with a version above v.
func namesAfter(v int) ([]string, error) {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("list embedded migrations: %w", err)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".up.sql")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(name, "_")
		n, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("embedded migration %s: name does not start with a number", e.Name())
		}
		if n > v {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// driverURL turns postgres://... into golang-migrate's pgx5://... with the
// deployer migrations table.
func driverURL(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("backend %q: want postgres://USER@HOST:PORT/DB", backendurl.Redact(rawURL))
	}
	u.Scheme = "pgx5"
	q := u.Query()
	q.Set("x-migrations-table", MigrationsTable)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Gate runs Check on first use and remembers success, so each backend
// checks the schema once per process (a failure is checked again next time).
type Gate struct{ ready atomic.Bool }

// Ensure returns ctx's error, or Check's wrapped with op, until Check
// succeeds once.
func (g *Gate) Ensure(ctx context.Context, q Querier, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if g.ready.Load() {
		return nil
	}
	if err := Check(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	g.ready.Store(true)
	return nil
}

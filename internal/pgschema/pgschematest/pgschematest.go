// Package pgschematest gives tests of the PostgreSQL backends a schema of
// their own in the test server that scripts/test-servers/selfhosted.sh starts,
// so test packages running in parallel never see each other's rows.
package pgschematest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/pgschema"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// Empty creates a new, empty PostgreSQL schema (namespace) and returns the
// test server's URL with search_path set to it. The schema is dropped when t
// ends. Without a server the test fails in CI and skips elsewhere.
func Empty(t testing.TB) string {
	t.Helper()
	return EmptyAt(t, testenv.Require(t, testenv.PostgresURL, "PostgreSQL"))
}

// EmptyAt is Empty on the server of the URL base.
func EmptyAt(t testing.TB, base string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "deployer_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", backendurl.Redact(base), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", backendurl.Redact(base), err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Migrated is Empty with deployer's schema applied by pgschema.Migrate.
func Migrated(t testing.TB) string {
	t.Helper()
	return MigratedAt(t, testenv.Require(t, testenv.PostgresURL, "PostgreSQL"))
}

// MigratedAt is Migrated on the server of the URL base.
func MigratedAt(t testing.TB, base string) string {
	t.Helper()
	u := EmptyAt(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := pgschema.Migrate(ctx, u); err != nil {
		t.Fatalf("migrate test schema: %v", err)
	}
	return u
}

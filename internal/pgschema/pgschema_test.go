package pgschema_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/deployer-dev/deployer/internal/pgschema"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
	"github.com/deployer-dev/deployer/internal/testenv"
)

func TestCheckThenMigrate(t *testing.T) {
	ctx := context.Background()
	u := pgschematest.Empty(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	err = pgschema.Check(ctx, conn)
	want := "postgres schema is at version 0, deployer needs 1: run deployer backend init"
	if err == nil || err.Error() != want {
		t.Fatalf("Check on an empty schema = %v, want %q", err, want)
	}
	if !errors.Is(err, pgschema.ErrSchema) {
		t.Errorf("Check error does not wrap ErrSchema: %v", err)
	}

	applied, err := pgschema.Migrate(ctx, u)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if diff := cmp.Diff([]string{"000001_init"}, applied); diff != "" {
		t.Errorf("applied migrations (-want +got):\n%s", diff)
	}
	if err := pgschema.Check(ctx, conn); err != nil {
		t.Errorf("Check after Migrate: %v", err)
	}
	for _, table := range []string{"deployer_locks", "deployer_state", "deployer_state_events"} {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Errorf("table %s after Migrate: %v", table, err)
		}
	}

	again, err := pgschema.Migrate(ctx, u)
	if err != nil || len(again) != 0 {
		t.Errorf("second Migrate = %v, %v; want nothing applied, no error", again, err)
	}
}

func TestCheckOlderAndDirty(t *testing.T) {
	ctx := context.Background()
	u := pgschematest.Migrated(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	if _, err := conn.Exec(ctx, "UPDATE "+pgschema.MigrationsTable+" SET version = 0, dirty = true"); err != nil {
		t.Fatal(err)
	}
	err = pgschema.Check(ctx, conn)
	var se *pgschema.SchemaError
	if !errors.As(err, &se) || !se.Dirty {
		t.Fatalf("Check on a dirty schema = %v, want a dirty *SchemaError", err)
	}
	if _, err := pgschema.Migrate(ctx, u); !errors.As(err, &se) || !se.Dirty {
		t.Errorf("Migrate on a dirty schema = %v, want a dirty *SchemaError", err)
	}
}

func TestMigrateRefusesOtherSchemes(t *testing.T) {
	_, err := pgschema.Migrate(context.Background(), "mysql://u:secret@h/db")
	if err == nil {
		t.Fatal("Migrate accepted mysql://")
	}
	if got := err.Error(); got != `backend "mysql://u:xxxxx@h/db": want postgres://USER@HOST:PORT/DB` {
		t.Errorf("error = %q", got)
	}
}

func TestCheckNamesTheFixWhenTheServerIsUnreachable(t *testing.T) {
	addr := testenv.ClosedAddr(t)
	pool, err := pgxpool.New(context.Background(), "postgres://u:secret@"+addr+"/db?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	err = pgschema.Check(context.Background(), pool)
	if err == nil || errors.Is(err, pgschema.ErrSchema) {
		t.Fatalf("Check against a closed port = %v, want a connection error", err)
	}
	for _, want := range []string{"cannot connect to PostgreSQL", "host, port, user, password, database and sslmode"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error leaks the password: %q", err)
	}
}

// Eight `backend init` at once on a fresh database (a CI matrix): all succeed,
// exactly one applies the migration, the others find the schema current; no
// one reports a dirty schema while another is migrating.
func TestConcurrentMigrate(t *testing.T) {
	u := pgschematest.Empty(t)
	const n = 8
	type result struct {
		applied []string
		err     error
	}
	results := make(chan result, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			applied, err := pgschema.Migrate(context.Background(), u)
			results <- result{applied, err}
		})
	}
	wg.Wait()
	close(results)
	var appliers int
	for r := range results {
		if r.err != nil {
			t.Errorf("concurrent Migrate: %v", r.err)
			continue
		}
		if len(r.applied) > 0 {
			appliers++
			if diff := cmp.Diff([]string{"000001_init"}, r.applied); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
		}
	}
	if appliers != 1 {
		t.Errorf("%d of %d concurrent Migrate calls applied the migration, want exactly 1", appliers, n)
	}
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := pgschema.Check(context.Background(), conn); err != nil {
		t.Errorf("Check after concurrent Migrate: %v", err)
	}
}

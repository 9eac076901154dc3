package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/deployer-dev/deployer/internal/pgschema"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/postgres"
)

func open(tb testing.TB, url string, o postgres.Options) *postgres.Backend {
	tb.Helper()
	b, err := postgres.Open(context.Background(), url, o)
	if err != nil {
		tb.Fatalf("open postgres state backend: %v", err)
	}
	tb.Cleanup(func() { _ = b.Close() })
	return b
}

// doc is a state document whose bytes jsonb would rewrite (key order,
// spacing): the backend must hand back exactly these bytes.
func doc(serial int64) []byte {
	return fmt.Appendf(nil, "{\"version\":\"1.0.0\",  \"serial\": %d,\n \"lineage\":\"L\", \"a\":1, \"a\":2}", serial)
}

func write(t *testing.T, b *postgres.Backend, serial int64, prev statestore.Version, at time.Time) statestore.Version {
	t.Helper()
	v, err := b.Write(context.Background(), statestore.WriteRequest{Stack: "shop", Env: "prod", Serial: serial,
		Lineage: "L", Time: at, Document: doc(serial), Prev: prev, DeploymentID: fmt.Sprintf("dep-%d", serial)})
	if err != nil {
		t.Fatalf("Write serial %d: %v", serial, err)
	}
	return v
}

func TestWriteReadKeepsExactBytes(t *testing.T) {
	b := open(t, pgschematest.Migrated(t), postgres.Options{})
	ctx := context.Background()
	if _, _, err := b.Read(ctx, "shop", "prod"); !errors.Is(err, statestore.ErrNotFound) {
		t.Fatalf("Read before any write = %v, want ErrNotFound", err)
	}
	t0 := time.Date(2024, 1, 15, 14, 20, 0, 0, time.UTC)
	v1 := write(t, b, 1, "", t0)
	v2 := write(t, b, 2, v1, t0.Add(time.Minute))
	if v1 == v2 {
		t.Errorf("two writes returned the same version %q", v1)
	}
	got, v, err := b.Read(ctx, "shop", "prod")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(doc(2)) || v != v2 {
		t.Errorf("Read = %q, %q; want %q, %q", got, v, doc(2), v2)
	}
}

func TestStaleVersionIsAConflict(t *testing.T) {
	b := open(t, pgschematest.Migrated(t), postgres.Options{})
	t0 := time.Now()
	v1 := write(t, b, 1, "", t0)
	write(t, b, 2, v1, t0)
	for _, prev := range []statestore.Version{"", v1, "not-a-version"} {
		_, err := b.Write(context.Background(), statestore.WriteRequest{Stack: "shop", Env: "prod", Serial: 3,
			Lineage: "L", Time: t0, Document: doc(3), Prev: prev, DeploymentID: "dep-late"})
		var ce *statestore.ConflictError
		if !errors.As(err, &ce) {
			t.Errorf("Write with Prev %q = %v, want *ConflictError", prev, err)
		}
	}
	hist, err := b.ListSnapshots(context.Background(), "shop", "prod")
	if err != nil || len(hist) != 2 {
		t.Errorf("History after refused writes = %v, %v; want 2 snapshots (nothing half-written)", hist, err)
	}
}

func TestHistoryAndSnapshots(t *testing.T) {
	url := pgschematest.Migrated(t)
	b := open(t, url, postgres.Options{})
	ctx := context.Background()
	t0 := time.Date(2024, 1, 15, 14, 20, 0, 0, time.UTC)
	var v statestore.Version
	for s := int64(1); s <= 3; s++ {
		v = write(t, b, s, v, t0.Add(time.Duration(s)*time.Second))
	}
	hist, err := b.ListSnapshots(ctx, "shop", "prod")
	if err != nil {
		t.Fatal(err)
	}
	want := []statestore.SnapshotInfo{
		{Serial: 3, Time: t0.Add(3 * time.Second), Name: "2024-01-15T14-20-03.000Z-3.json"},
		{Serial: 2, Time: t0.Add(2 * time.Second), Name: "2024-01-15T14-20-02.000Z-2.json"},
		{Serial: 1, Time: t0.Add(1 * time.Second), Name: "2024-01-15T14-20-01.000Z-1.json"},
	}
	bySerial := cmpopts.SortSlices(func(a, b statestore.SnapshotInfo) bool { return a.Serial > b.Serial })
	if d := cmp.Diff(want, hist, bySerial); d != "" {
		t.Errorf("ListSnapshots (-want +got):\n%s", d)
	}
	snap, err := b.ReadSnapshot(ctx, "shop", "prod", want[2])
	if err != nil || string(snap) != string(doc(1)) {
		t.Errorf("ReadSnapshot(1) = %q, %v; want %q", snap, err, doc(1))
	}
	if _, err := b.ReadSnapshot(ctx, "shop", "prod", statestore.SnapshotInfo{Serial: 9, Name: statestore.SnapshotName(t0, 9)}); !errors.Is(err, statestore.ErrNotFound) {
		t.Errorf("ReadSnapshot(9) = %v, want ErrNotFound", err)
	}

	// The event chain: correlation = own deployment, causation = previous one.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT serial, correlation_id, causation_id FROM deployer_state_events
		WHERE stack = 'shop' AND env = 'prod' ORDER BY serial`)
	type ev struct {
		Serial                 int64
		Correlation, Causation *string
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ev])
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	wantEv := []ev{{1, s("dep-1"), nil}, {2, s("dep-2"), s("dep-1")}, {3, s("dep-3"), s("dep-2")}}
	if d := cmp.Diff(wantEv, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestMissingSchemaSaysRunBackendInit(t *testing.T) {
	b := open(t, pgschematest.Empty(t), postgres.Options{})
	_, _, err := b.Read(context.Background(), "shop", "prod")
	if !errors.Is(err, pgschema.ErrSchema) {
		t.Fatalf("Read without schema = %v, want pgschema.ErrSchema", err)
	}
	want := "run deployer backend init"
	if got := err.Error(); len(got) < len(want) || got[len(got)-len(want):] != want {
		t.Errorf("error = %q, want it to end with %q", got, want)
	}
}

func TestLocationHasNoPassword(t *testing.T) {
	b, err := postgres.Open(context.Background(), "postgres://deployer:s3cret@db.internal:6432/infra?sslmode=disable", postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, want := b.Location("shop", "prod"), "postgres://db.internal:6432/infra (shop/prod)"; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
}

// A document of several read pieces (with a short last one) and every byte
// value comes back exactly from the state row and the history event; the
// event's created_at keeps the write's time to the microsecond, as a bound
// parameter would; an empty document is kept too.
func TestLargeDocumentStreamedAndReadInPieces(t *testing.T) {
	url := pgschematest.Migrated(t)
	b := open(t, url, postgres.Options{})
	ctx := context.Background()
	big := make([]byte, 2<<20+12345)
	for i := range big {
		big[i] = byte(i*7 + i/251)
	}
	at := time.Date(2024, 1, 15, 14, 20, 0, 123456789, time.UTC)
	v, err := b.Write(ctx, statestore.WriteRequest{Stack: "big", Env: "prod", Serial: 1, Lineage: "L",
		Time: at, Document: big, DeploymentID: "dep-1"})
	if err != nil {
		t.Fatal(err)
	}
	got, gotV, err := b.Read(ctx, "big", "prod")
	if err != nil || !bytes.Equal(got, big) || gotV != v {
		t.Fatalf("Read = %d bytes (equal: %v), version %q, %v; want the %d bytes written, version %q",
			len(got), bytes.Equal(got, big), gotV, err, len(big), v)
	}
	snap, err := b.ReadSnapshot(ctx, "big", "prod", statestore.SnapshotInfo{Serial: 1, Name: statestore.SnapshotName(at, 1)})
	if err != nil || !bytes.Equal(snap, big) {
		t.Fatalf("ReadSnapshot = %d bytes (equal: %v), %v", len(snap), bytes.Equal(snap, big), err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var created time.Time
	if err := conn.QueryRow(ctx, `SELECT created_at FROM deployer_state_events WHERE stack = 'big'`).Scan(&created); err != nil {
		t.Fatal(err)
	}
	if want := at.Truncate(time.Microsecond); !created.Equal(want) {
		t.Errorf("created_at = %v, want %v", created.UTC(), want)
	}

	if _, err := b.Write(ctx, statestore.WriteRequest{Stack: "empty", Env: "prod", Serial: 1, Lineage: "L",
		Time: at, Document: []byte{}, DeploymentID: "dep-1"}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := b.Read(ctx, "empty", "prod"); err != nil || len(got) != 0 {
		t.Errorf("Read of an empty document = %q, %v", got, err)
	}
}

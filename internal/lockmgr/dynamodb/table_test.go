package dynamodb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	ddblock "github.com/deployer-dev/deployer/internal/lockmgr/dynamodb"
)

func TestInitCreatesTheTableThenReportsIt(t *testing.T) {
	o := awstest.DynamoDBOptions(t)
	table := awstest.Name()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	urls := []string{"dynamodb://" + table}

	first, err := ddblock.Init(ctx, urls, o)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	tbl := `dynamodb table "` + table + `"`
	want := tbl + ": table: created (PAY_PER_REQUEST, hash key lockKey)\n" +
		tbl + ": ttl on expiresAt: skipped (not needed: an expired lock is free for the next acquire, and the item keeps the key's fence)\n"
	if first.String() != want {
		t.Errorf("first Init:\n%s\nwant:\n%s", first, want)
	}
	second, err := ddblock.Init(ctx, urls, o)
	if err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if !strings.Contains(second.String(), tbl+": table: already existed") {
		t.Errorf("second Init:\n%s", second)
	}
	for _, it := range second.Items {
		if it.Outcome == awsbackend.OutcomeCreated {
			t.Errorf("second Init created %s again", it.Setting)
		}
	}

	// The table Init made is the one the backend uses.
	b, err := ddblock.Open(ctx, urls[0], o)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := b.TryAcquire(ctx, lockmgr.Record{LockKey: lockmgr.StackKey("s", "e"), LockID: "id-1", LockedBy: "t",
		LockedAt: time.Now().Unix(), ExpiresAt: time.Now().Add(time.Minute).Unix(), LastHeartbeat: time.Now().Unix()})
	if err != nil || rec.Fence != 1 {
		t.Fatalf("TryAcquire on the new table: %v, fence %d", err, rec.Fence)
	}
}

func TestMissingTableErrorNamesTableAndFix(t *testing.T) {
	o := awstest.DynamoDBOptions(t)
	ctx := context.Background()
	b, err := ddblock.Open(ctx, "dynamodb://no-such-table-here?region=us-east-1", o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Get(ctx, lockmgr.StackKey("s", "e"))
	if err == nil || errors.Is(err, lockmgr.ErrNotFound) {
		t.Fatalf("Get on a missing table = %v, want a not-found-table error", err)
	}
	for _, want := range []string{`dynamodb table "no-such-table-here" in us-east-1 not found`, "deployer backend init"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

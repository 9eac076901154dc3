package awsbackend_test

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

func outcomes(r awsbackend.Report) map[string]string {
	m := map[string]string{}
	for _, it := range r.Items {
		m[it.Resource+" "+it.Setting] = it.Outcome
	}
	return m
}

func TestInitCreatesThenReportsExisting(t *testing.T) {
	ddbOpts := awstest.DynamoDBOptions(t)
	s3Opts := awstest.S3Options(t)
	o := ddbOpts
	o.S3Endpoint, o.PathStyle = s3Opts.S3Endpoint, true
	table, bucket := awstest.Name(), awstest.Name()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	stateURL, lockURL := "s3://"+bucket+"/team", "dynamodb://"+table
	first, err := awsbackend.Init(ctx, stateURL, lockURL, o)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	got := outcomes(first)
	tbl, bkt := `dynamodb table "`+table+`"`, `s3 bucket "`+bucket+`"`
	for _, k := range []string{tbl + " table", bkt + " bucket", bkt + " versioning"} {
		if got[k] != awsbackend.OutcomeCreated {
			t.Errorf("first Init: %s = %q, want created\n%s", k, got[k], first)
		}
	}
	// TTL stays off (the item keeps the fence); the report says so.
	if got[tbl+" ttl on expiresAt"] == "" {
		t.Errorf("first Init says nothing about TTL:\n%s", first)
	}

	t.Logf("first:\n%s", first)
	second, err := awsbackend.Init(ctx, stateURL, lockURL, o)
	if err != nil {
		t.Fatalf("second Init: %v", err)
	}
	for k, v := range outcomes(second) {
		if v == awsbackend.OutcomeCreated {
			t.Errorf("second Init created %s again:\n%s", k, second)
		}
	}
	if !strings.Contains(second.String(), bkt+": versioning: already existed") {
		t.Errorf("second report lacks existing versioning:\n%s", second)
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

package s3_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/statestore"
	s3state "github.com/deployer-dev/deployer/internal/statestore/s3"
)

func open(tb testing.TB, raw string, o awsbackend.Options) *s3state.Backend {
	tb.Helper()
	b, err := s3state.Open(context.Background(), raw, o)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func req(serial int64, prev statestore.Version, doc string) statestore.WriteRequest {
	return statestore.WriteRequest{Stack: "user-platform", Env: "production", Serial: serial, Lineage: "l-1",
		Time: time.Date(2024, 1, 15, 14, 20, 0, int(serial)*int(time.Millisecond), time.UTC), Document: []byte(doc), Prev: prev}
}

// Objects land where docs/design.md#state-layout says, readable by any S3 client, encrypted as asked.
func TestLayoutAndEncryption(t *testing.T) {
	c, bucket, o := awstest.NewBucket(t)
	o.SSE = "AES256"
	b := open(t, "s3://"+bucket+"/team", o)
	ctx := context.Background()
	v1, err := b.Write(ctx, req(1, "", `{"serial":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Location("user-platform", "production"), "s3://"+bucket+"/team/stacks/user-platform/production/state.json"; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	for _, key := range []string{"team/stacks/user-platform/production/state.json", "team/stacks/user-platform/production/history/2024-01-15T14-20-00.001Z-1.json"} {
		h, err := c.HeadObject(ctx, &s3api.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Errorf("object %s: %v", key, err)
			continue
		}
		if h.ServerSideEncryption != types.ServerSideEncryptionAes256 {
			t.Errorf("object %s encryption = %q, want AES256", key, h.ServerSideEncryption)
		}
	}
	data, v, err := b.Read(ctx, "user-platform", "production")
	if err != nil || string(data) != `{"serial":1}` || v != v1 {
		t.Errorf("Read = %q, %q, %v; want the document and version %q", data, v, err, v1)
	}
}

// Two writers read the same version; the second write is a conflict and
// leaves the first one's state and history intact.
func TestCompareAndSwap(t *testing.T) {
	_, bucket, o := awstest.NewBucket(t)
	a, b := open(t, "s3://"+bucket, o), open(t, "s3://"+bucket, o)
	ctx := context.Background()
	v1, err := a.Write(ctx, req(1, "", `{"serial":1}`))
	if err != nil {
		t.Fatal(err)
	}
	var conflict *statestore.ConflictError
	if _, err := b.Write(ctx, req(1, "", `{"serial":1,"other":true}`)); !errors.As(err, &conflict) {
		t.Errorf("second first-write = %v, want *ConflictError", err)
	}
	if _, err := a.Write(ctx, req(2, v1, `{"serial":2}`)); err != nil {
		t.Fatal(err)
	}
	late := req(2, v1, `{"serial":2,"lost":true}`)
	late.Time = late.Time.Add(time.Second)
	if _, err := b.Write(ctx, late); !errors.As(err, &conflict) || !strings.Contains(err.Error(), "written by someone else") {
		t.Errorf("stale write = %v, want *ConflictError", err)
	}
	data, _, err := b.Read(ctx, "user-platform", "production")
	if err != nil || string(data) != `{"serial":2}` {
		t.Errorf("state after lost CAS = %q, %v; want serial 2 of the winner", data, err)
	}
	hist, err := b.ListSnapshots(ctx, "user-platform", "production")
	if err != nil {
		t.Fatal(err)
	}
	serials := map[int64]statestore.SnapshotInfo{}
	for _, sn := range hist {
		serials[sn.Serial] = sn
	}
	if len(hist) != 2 || len(serials) != 2 || serials[1].Name == "" || serials[2].Name == "" {
		t.Errorf("ListSnapshots = %+v, want one snapshot each of serials 1 and 2 (the losers' snapshots removed)", hist)
	}
	snap, err := b.ReadSnapshot(ctx, "user-platform", "production", serials[1])
	if err != nil || string(snap) != `{"serial":1}` {
		t.Errorf("ReadSnapshot(%s) = %q, %v", serials[1].Name, snap, err)
	}
	gone := statestore.SnapshotInfo{Serial: 9, Time: time.Now().UTC(), Name: statestore.SnapshotName(time.Now(), 9)}
	if _, err := b.ReadSnapshot(ctx, "user-platform", "production", gone); !errors.Is(err, statestore.ErrNotFound) {
		t.Errorf("ReadSnapshot(%s) = %v, want ErrNotFound", gone.Name, err)
	}
	if _, _, err := b.Read(ctx, "user-platform", "staging"); !errors.Is(err, statestore.ErrNotFound) {
		t.Errorf("Read of a new env = %v, want ErrNotFound", err)
	}
}

func TestRefusesServerIgnoringConditionalWrites(t *testing.T) {
	d := awstest.NewCarelessS3(t)
	b := open(t, "s3://careless-state-bucket", d.Options())
	_, err := b.Write(context.Background(), req(1, "", `{}`))
	var ignored *awsbackend.ErrConditionalWritesIgnored
	if !errors.As(err, &ignored) {
		t.Fatalf("Write on a store ignoring If-None-Match = %v, want *ErrConditionalWritesIgnored", err)
	}
	if !strings.Contains(err.Error(), "refuses") {
		t.Errorf("error does not say deployer refuses: %v", err)
	}
	if got := d.Puts.Load(); got != 2 {
		t.Errorf("%d PUTs reached the store, want only the 2 of the probe (no state written)", got)
	}
}

func TestRejectsBadSSE(t *testing.T) {
	if _, err := s3state.New(nil, awsbackend.S3URL{Bucket: "b"}, awsbackend.Options{SSE: "aes"}); err == nil || !strings.Contains(err.Error(), "AES256 or aws:kms") {
		t.Errorf("New with sse aes = %v, want an error naming the allowed values", err)
	}
}

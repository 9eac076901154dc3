package s3_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
)

// BenchmarkS3 compares one lock cycle with the raw conditional PUT
// (If-None-Match: *) + DELETE on the same server, in one run (docs/backends.md#performance-make-bench), and
// with the raw floor of its own protocol (two PUTs with If-Match).
func BenchmarkS3(b *testing.B) {
	client, bucket, o := awstest.NewBucket(b)
	raw := "s3://" + bucket
	ctx := context.Background()
	body := []byte(`{"lockKey":"bench","lockId":"00000000-0000-0000-0000-000000000000","expiresAt":9999999999}`)
	b.Run("raw_put_delete", func(b *testing.B) {
		key := "bench/raw-" + uuid.NewString() + ".json"
		for b.Loop() {
			_, err := client.PutObject(ctx, &s3api.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
				Body: bytes.NewReader(body), IfNoneMatch: aws.String("*"), ContentType: aws.String("application/json")})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := client.DeleteObject(ctx, &s3api.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The floor of a protocol that never DELETEs (MinIO ignores conditional
	// DELETE): two PUTs conditional on the ETag, as acquire + release make.
	b.Run("raw_put_put_ifmatch", func(b *testing.B) {
		key := "bench/raw2-" + uuid.NewString() + ".json"
		out, err := client.PutObject(ctx, &s3api.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			b.Fatal(err)
		}
		etag := aws.ToString(out.ETag)
		for b.Loop() {
			for range 2 {
				out, err := client.PutObject(ctx, &s3api.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
					Body: bytes.NewReader(body), IfMatch: aws.String(etag), ContentType: aws.String("application/json")})
				if err != nil {
					b.Fatal(err)
				}
				etag = aws.ToString(out.ETag)
			}
		}
	})
	b.Run("acquire_release", func(b *testing.B) {
		be := open(b, raw, o)
		key := lockmgr.StackKey("bench-"+uuid.NewString()[:8], "bench")
		now := time.Now()
		rec := lockmgr.Record{LockKey: key, LockedBy: "bench@host", LockedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix()}
		for b.Loop() {
			rec.LockID = uuid.NewString()
			if _, err := be.TryAcquire(ctx, rec); err != nil {
				b.Fatal(err)
			}
			if err := be.Release(ctx, key, rec.LockID); err != nil {
				b.Fatal(err)
			}
		}
	})
	locktest.Bench(b, func(b *testing.B) lockmgr.Backend { return open(b, raw, o) })
}

package s3_test

import (
	"context"
	"sync/atomic"
	"testing"

	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	lock3 "github.com/deployer-dev/deployer/internal/lockmgr/s3"
)

// counted counts the requests sent through an S3 client.
type counted struct {
	awsbackend.S3API
	n *atomic.Int64
}

func (c counted) GetObject(ctx context.Context, in *s3api.GetObjectInput, o ...func(*s3api.Options)) (*s3api.GetObjectOutput, error) {
	c.n.Add(1)
	return c.S3API.GetObject(ctx, in, o...)
}

func (c counted) PutObject(ctx context.Context, in *s3api.PutObjectInput, o ...func(*s3api.Options)) (*s3api.PutObjectOutput, error) {
	c.n.Add(1)
	return c.S3API.PutObject(ctx, in, o...)
}

func (c counted) DeleteObject(ctx context.Context, in *s3api.DeleteObjectInput, o ...func(*s3api.Options)) (*s3api.DeleteObjectOutput, error) {
	c.n.Add(1)
	return c.S3API.DeleteObject(ctx, in, o...)
}

func (c counted) ListObjectsV2(ctx context.Context, in *s3api.ListObjectsV2Input, o ...func(*s3api.Options)) (*s3api.ListObjectsV2Output, error) {
	c.n.Add(1)
	return c.S3API.ListObjectsV2(ctx, in, o...)
}

// BenchmarkWaitingRequestRate: the S3 requests of a waiting process, at the
// head of the queue and behind it (docs/locking.md#wait-queue).
func BenchmarkWaitingRequestRate(b *testing.B) {
	_, bucket, o := awstest.NewBucket(b)
	raw := "s3://" + bucket
	locktest.BenchWaitingRate(b, func(b *testing.B) (lockmgr.Backend, *atomic.Int64) {
		api, u, err := awsbackend.OpenS3(context.Background(), raw, "lock backend", o)
		if err != nil {
			b.Fatal(err)
		}
		n := &atomic.Int64{}
		return lock3.New(counted{api, n}, u, o), n
	})
}

package s3_test

import (
	"bytes"
	"context"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
)

// An 8 MiB object at a lock key, put through the S3 API (docs/locking.md,
// "Record size").
func TestOversizedRecordIsHeldAndNamed(t *testing.T) {
	api, bucket, o := awstest.NewBucket(t)
	b := open(t, "s3://"+bucket+"/team-a", o)
	locktest.RunOversized(t, b, func(t *testing.T, key string, data []byte) {
		_, err := api.PutObject(context.Background(), &s3api.PutObjectInput{Bucket: aws.String(bucket),
			Key: aws.String("team-a/locks/" + url.PathEscape(key) + ".json"), Body: bytes.NewReader(data)})
		if err != nil {
			t.Fatal(err)
		}
	})
}

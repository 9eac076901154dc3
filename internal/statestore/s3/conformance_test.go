package s3_test

import (
	"testing"

	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

// The suite runs on a bucket with versioning on, as `deployer backend init`
// and the Terraform of docs/aws.md#terraform creates it, and with SSE on every PUT.
func TestConformance(t *testing.T) {
	_, bucket, o := awstest.NewBucket(t)
	o.SSE = "AES256"
	storetest.Run(t, func(t *testing.T) statestore.Backend { return open(t, "s3://"+bucket+"/team", o) })
}

// BenchmarkS3State: load + verify + save of a 10,000-resource state on MinIO.
func BenchmarkS3State(b *testing.B) {
	_, bucket, o := awstest.NewBucket(b)
	storetest.Bench(b, func(b *testing.B) statestore.Backend { return open(b, "s3://"+bucket, o) })
}

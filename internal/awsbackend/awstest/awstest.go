// Package awstest gives tests of the AWS backends a fresh DynamoDB table or
// S3 bucket on the local servers scripts/test-servers/aws.sh starts
// (dynalite, MinIO), found through internal/testenv (docs/backends.md, docs/aws.md#local-servers-development-and-tests).
package awstest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	ddblock "github.com/deployer-dev/deployer/internal/lockmgr/dynamodb"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// Region used against local servers unless AWS_REGION says otherwise.
func Region() string {
	if r := os.Getenv("AWS_REGION"); r != "" {
		return r
	}
	return "us-east-1"
}

func creds(o *awsbackend.Options) {
	o.AccessKeyID, o.SecretAccessKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if o.AccessKeyID == "" || o.SecretAccessKey == "" {
		o.AccessKeyID, o.SecretAccessKey = "minioadmin", "minioadmin" // MinIO's default; dynalite accepts any
	}
	o.Region = Region()
}

// Name returns a unique lower-case resource name valid for tables and buckets.
func Name() string {
	return "deployer-test-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
}

// DynamoDBOptions returns Options pointing at the test dynalite server.
func DynamoDBOptions(tb testing.TB) awsbackend.Options {
	tb.Helper()
	o := awsbackend.Options{DynamoDBEndpoint: testenv.Require(tb, testenv.DynamoDBEndpoint, "dynalite (DynamoDB API)")}
	creds(&o)
	return o
}

// S3Options returns Options pointing at the test MinIO server, path-style.
func S3Options(tb testing.TB) awsbackend.Options {
	tb.Helper()
	o := awsbackend.Options{S3Endpoint: testenv.Require(tb, testenv.S3Endpoint, "MinIO (S3 API)"), PathStyle: true}
	creds(&o)
	return o
}

func ctx(tb testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	tb.Cleanup(cancel)
	return c
}

// NewTable creates a fresh lock table (as `deployer backend init` does) and
// returns a client and its name.
func NewTable(tb testing.TB) (*dynamodb.Client, string, awsbackend.Options) {
	tb.Helper()
	o := DynamoDBOptions(tb)
	cfg, err := awsbackend.LoadConfig(ctx(tb), "", o)
	if err != nil {
		tb.Fatal(err)
	}
	c := awsbackend.NewDynamoDBClient(cfg, o)
	name := Name()
	if err := ddblock.EnsureTable(ctx(tb), c, name, cfg.Region, &awsbackend.Report{}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return c, name, o
}

// NewBucket creates a fresh bucket with versioning on (as `deployer backend
// init` does) and returns a client and its name.
func NewBucket(tb testing.TB) (*s3.Client, string, awsbackend.Options) {
	tb.Helper()
	o := S3Options(tb)
	cfg, err := awsbackend.LoadConfig(ctx(tb), "", o)
	if err != nil {
		tb.Fatal(err)
	}
	c := awsbackend.NewS3Client(cfg, true, o)
	name := Name()
	if err := awsbackend.EnsureBucket(ctx(tb), c, name, cfg.Region, o, &awsbackend.Report{}); err != nil {
		tb.Fatal(err)
	}
	return c, name, o
}

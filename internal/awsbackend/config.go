package awsbackend

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Options are the AWS settings beyond the backend URL. Zero values mean the
// SDK's standard chain decides (AWS_PROFILE, AWS_REGION, credentials,
// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_DYNAMODB).
type Options struct {
	Region    string // overrides the chain; a URL's ?region= overrides this
	PathStyle bool   // S3 path-style addressing (MinIO); backend.path_style
	SSE       string // S3 state writes: "", "AES256" or "aws:kms"
	KMSKeyID  string // with SSE "aws:kms"; "" = the bucket's default key

	// S3Endpoint and DynamoDBEndpoint override the SDK's endpoint resolution
	// (tests; users set AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB).
	S3Endpoint       string
	DynamoDBEndpoint string
	// AccessKeyID and SecretAccessKey, when both set, replace the credentials
	// chain with static keys (tests against MinIO/dynalite).
	AccessKeyID, SecretAccessKey string
}

// LoadConfig loads aws.Config from the standard chain; region, when not
// empty, wins over the chain. It fails when no region is known, naming what
// to set.
func LoadConfig(ctx context.Context, region string, o Options) (aws.Config, error) {
	if region == "" {
		region = o.Region
	}
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if o.AccessKeyID != "" && o.SecretAccessKey != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(o.AccessKeyID, o.SecretAccessKey, "")))
	}
	// Lock contention produces bursts of ConditionalCheckFailed/412, which the
	// SDK does not retry; the client-side retry quota only gets in the way of
	// real transient errors under load, so it is off.
	opts = append(opts, config.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(so *retry.StandardOptions) { so.RateLimiter = ratelimit.None })
	}))
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w (check AWS_PROFILE and ~/.aws/config)", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, ErrNoRegion
	}
	return cfg, nil
}

// ErrNoRegion: neither the URL, the options nor the SDK chain name a region.
var ErrNoRegion = fmt.Errorf("no AWS region configured: add ?region=REGION to the backend URL or set AWS_REGION (or region in your AWS profile)")

// NewS3Client returns an S3 client for cfg with path-style addressing when
// pathStyle is set and the endpoint override of o.
func NewS3Client(cfg aws.Config, pathStyle bool, o Options) *s3.Client {
	return s3.NewFromConfig(cfg, func(so *s3.Options) {
		so.UsePathStyle = pathStyle || o.PathStyle
		if o.S3Endpoint != "" {
			so.BaseEndpoint = aws.String(o.S3Endpoint)
		}
	})
}

// OpenS3 parses raw ("s3://BUCKET[/prefix]?region=R&path_style=true"), loads
// the AWS configuration from the SDK chain and returns an S3 client for it
// with the URL, its region filled in. what names the backend in errors
// ("lock backend", "state backend"). Errors: ParseS3URL's, or what loading
// the configuration returned (ErrNoRegion among them).
func OpenS3(ctx context.Context, raw, what string, o Options) (*s3.Client, S3URL, error) {
	u, err := ParseS3URL(raw)
	if err != nil {
		return nil, S3URL{}, err
	}
	cfg, err := LoadConfig(ctx, u.Region, o)
	if err != nil {
		return nil, S3URL{}, fmt.Errorf("%s %s: %w", what, raw, err)
	}
	u.Region = cfg.Region
	return NewS3Client(cfg, u.PathStyle, o), u, nil
}

// NewDynamoDBClient returns a DynamoDB client for cfg with the endpoint
// override of o.
func NewDynamoDBClient(cfg aws.Config, o Options) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(do *dynamodb.Options) {
		if o.DynamoDBEndpoint != "" {
			do.BaseEndpoint = aws.String(o.DynamoDBEndpoint)
		}
	})
}

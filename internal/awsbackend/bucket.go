package awsbackend

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// InitBuckets creates, idempotently, the bucket of each s3:// URL, state or
// lock (`deployer backend init`, docs/aws.md#setup): see EnsureBucket; then
// it checks that the server enforces conditional writes
// (EnsureConditionalWrites). A
// bucket named by two URLs (state and locks under two prefixes) is set up
// once. Unsupported settings on local servers (MinIO's public access block)
// are reported as skipped, not failed. Errors name the bucket and the fix
// (Classify).
func InitBuckets(ctx context.Context, urls []string, o Options) (Report, error) {
	var rep Report
	buckets := map[string]bool{}
	for _, raw := range urls {
		u, err := ParseS3URL(raw)
		if err != nil {
			return rep, err
		}
		if buckets[u.Bucket] {
			continue
		}
		buckets[u.Bucket] = true
		cfg, err := LoadConfig(ctx, u.Region, o)
		if err != nil {
			return rep, fmt.Errorf("s3 bucket %q: %w", u.Bucket, err)
		}
		c := NewS3Client(cfg, u.PathStyle, o)
		if err := EnsureBucket(ctx, c, u.Bucket, cfg.Region, o, &rep); err != nil {
			return rep, err
		}
		// The first write of the bucket's life is where a server that
		// ignores conditional writes is best refused.
		if err := EnsureConditionalWrites(ctx, c, u); err != nil {
			return rep, err
		}
		rep.Add(fmt.Sprintf("s3 bucket %q", u.Bucket), "conditional writes (If-None-Match, If-Match)", OutcomeChecked, "")
	}
	return rep, nil
}

// unsupported reports the errors local servers give for APIs they lack.
func unsupported(err error) bool {
	switch ErrorCode(err) {
	case "NotImplemented", "UnknownOperationException", "UnknownOperation", "XNotImplemented", "InvalidAction":
		return true
	}
	s := HTTPStatus(err)
	return s == 501
}

// EnsureBucket creates bucket if needed and turns on versioning, default
// encryption (o.SSE, default AES256) and the public access block.
func EnsureBucket(ctx context.Context, c *s3.Client, bucket, region string, o Options, rep *Report) error {
	res := Resource{Service: "s3", Kind: "bucket", Name: bucket, Region: region}
	name := fmt.Sprintf("s3 bucket %q", bucket)
	_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	switch {
	case err == nil:
		rep.Add(name, "bucket", OutcomeExisted, "")
	case ErrorCode(err) == "NotFound" || ErrorCode(err) == "NoSuchBucket":
		in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
		if region != "" && region != "us-east-1" {
			in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
		}
		_, err := c.CreateBucket(ctx, in)
		var owned *s3types.BucketAlreadyOwnedByYou
		if err != nil && !errors.As(err, &owned) {
			return fmt.Errorf("create bucket: %w", Classify(err, res))
		}
		rep.Add(name, "bucket", OutcomeCreated, "")
	default:
		return fmt.Errorf("check bucket: %w", Classify(err, res))
	}

	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)})
	if err == nil && v.Status == s3types.BucketVersioningStatusEnabled {
		rep.Add(name, "versioning", OutcomeExisted, "")
	} else {
		_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
			Bucket:                  aws.String(bucket),
			VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled},
		})
		if err != nil {
			return fmt.Errorf("enable versioning: %w", Classify(err, res))
		}
		rep.Add(name, "versioning", OutcomeCreated, "")
	}

	if err := ensureEncryption(ctx, c, bucket, o, res, name, rep); err != nil {
		return err
	}

	pab, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bucket)})
	if err == nil && pab.PublicAccessBlockConfiguration != nil && aws.ToBool(pab.PublicAccessBlockConfiguration.BlockPublicAcls) &&
		aws.ToBool(pab.PublicAccessBlockConfiguration.RestrictPublicBuckets) {
		rep.Add(name, "public access block", OutcomeExisted, "")
		return nil
	}
	_, err = c.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{
		Bucket: aws.String(bucket),
		PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{
			BlockPublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true),
			IgnorePublicAcls: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true),
		},
	})
	switch {
	case err == nil:
		rep.Add(name, "public access block", OutcomeCreated, "")
	case unsupported(err) || ErrorCode(err) == "MalformedXML": // MinIO answers MalformedXML
		rep.Add(name, "public access block", OutcomeSkipped, "not supported by this endpoint (MinIO buckets are private unless a policy says otherwise)")
	default:
		return fmt.Errorf("block public access: %w", Classify(err, res))
	}
	return nil
}

func ensureEncryption(ctx context.Context, c *s3.Client, bucket string, o Options, res Resource, name string, rep *Report) error {
	enc, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String(bucket)})
	if err == nil && enc.ServerSideEncryptionConfiguration != nil && len(enc.ServerSideEncryptionConfiguration.Rules) > 0 {
		rep.Add(name, "default encryption", OutcomeExisted, "")
		return nil
	}
	rule := &s3types.ServerSideEncryptionByDefault{SSEAlgorithm: s3types.ServerSideEncryptionAes256}
	note := "AES256"
	if o.SSE == "aws:kms" {
		rule = &s3types.ServerSideEncryptionByDefault{SSEAlgorithm: s3types.ServerSideEncryptionAwsKms}
		note = "aws:kms"
		if o.KMSKeyID != "" {
			rule.KMSMasterKeyID = aws.String(o.KMSKeyID)
			note += " " + o.KMSKeyID
		}
	}
	_, err = c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{
		Bucket: aws.String(bucket),
		ServerSideEncryptionConfiguration: &s3types.ServerSideEncryptionConfiguration{
			Rules: []s3types.ServerSideEncryptionRule{{ApplyServerSideEncryptionByDefault: rule}},
		},
	})
	switch {
	case err == nil:
		rep.Add(name, "default encryption", OutcomeCreated, note)
	case unsupported(err) || ErrorCode(err) == "KMSNotConfigured" || strings.Contains(err.Error(), "KMS"):
		rep.Add(name, "default encryption", OutcomeSkipped, "not supported by this endpoint: "+ErrorCode(err))
	default:
		return fmt.Errorf("set default encryption: %w", Classify(err, res))
	}
	return nil
}

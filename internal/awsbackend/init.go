package awsbackend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Item is one line of a Report: a resource setting and what Init did to it.
type Item struct {
	Resource string // `dynamodb table "deployer-state-locks"`, `s3 bucket "b"`
	Setting  string // "table", "ttl on expiresAt", "versioning", "encryption", "public access block"
	Outcome  string // OutcomeCreated, OutcomeExisted or OutcomeSkipped
	Note     string // why it was skipped, or details
}

// Outcomes of an Item.
const (
	OutcomeCreated = "created"
	OutcomeExisted = "already existed"
	OutcomeSkipped = "skipped"
)

// Report lists what `deployer backend init` created, what already existed and
// what the endpoint does not support.
type Report struct {
	Items []Item
}

func (r *Report) add(res, setting, outcome, note string) {
	r.Items = append(r.Items, Item{Resource: res, Setting: setting, Outcome: outcome, Note: note})
}

// String renders one line per item: `s3 bucket "b": versioning: created`.
func (r Report) String() string {
	var b strings.Builder
	for _, it := range r.Items {
		fmt.Fprintf(&b, "%s: %s: %s", it.Resource, it.Setting, it.Outcome)
		if it.Note != "" {
			fmt.Fprintf(&b, " (%s)", it.Note)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Init creates, idempotently, the AWS resources the two backend URLs name: a
// dynamodb:// lock URL gets its table (PAY_PER_REQUEST, hash key lockKey S,
// no TTL: see EnsureTable); an s3:// state or lock
// URL gets its bucket (versioning, default encryption o.SSE or AES256, public
// access block). Other schemes are ignored. Unsupported settings on local
// servers (dynalite TTL, MinIO public access block) are reported as skipped,
// not failed. Errors name the resource and the fix (Classify).
func Init(ctx context.Context, stateURL, lockURL string, o Options) (Report, error) {
	var rep Report
	buckets := map[string]bool{}
	for _, raw := range []string{stateURL, lockURL} {
		switch {
		case strings.HasPrefix(raw, "dynamodb://"):
			u, err := ParseDynamoDBURL(raw)
			if err != nil {
				return rep, err
			}
			cfg, err := LoadConfig(ctx, u.Region, o)
			if err != nil {
				return rep, fmt.Errorf("dynamodb table %q: %w", u.Table, err)
			}
			if err := EnsureTable(ctx, NewDynamoDBClient(cfg, o), u.Table, cfg.Region, &rep); err != nil {
				return rep, err
			}
		case strings.HasPrefix(raw, "s3://"):
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
			if err := EnsureBucket(ctx, NewS3Client(cfg, u.PathStyle, o), u.Bucket, cfg.Region, o, &rep); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// EnsureTable creates the lock table if it does not exist and waits for it to
// be ACTIVE. It leaves TTL off and reports a table where TTL on expiresAt is
// on, with the command that turns it off (docs/aws.md, "DynamoDB lock item").
func EnsureTable(ctx context.Context, c *dynamodb.Client, table, region string, rep *Report) error {
	res := Resource{Service: "dynamodb", Kind: "table", Name: table, Region: region}
	name := fmt.Sprintf("dynamodb table %q", table)
	_, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var nf *ddbtypes.ResourceNotFoundException
	switch {
	case err == nil:
		rep.add(name, "table", OutcomeExisted, "")
	case errors.As(err, &nf):
		_, err = c.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            aws.String(table),
			BillingMode:          ddbtypes.BillingModePayPerRequest,
			AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("lockKey"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
			KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("lockKey"), KeyType: ddbtypes.KeyTypeHash}},
			Tags:                 []ddbtypes.Tag{{Key: aws.String("ManagedBy"), Value: aws.String("deployer")}},
		})
		var inUse *ddbtypes.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create table: %w", Classify(err, res))
		}
		w := dynamodb.NewTableExistsWaiter(c, func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay = 200 * time.Millisecond
			o.MaxDelay = 2 * time.Second
		})
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, 5*time.Minute); err != nil {
			return fmt.Errorf("wait for table to become ACTIVE: %w", Classify(err, res))
		}
		rep.add(name, "table", OutcomeCreated, "PAY_PER_REQUEST, hash key lockKey")
	default:
		return fmt.Errorf("describe table: %w", Classify(err, res))
	}

	// TTL stays off: a lock item outlives its holders and carries the key's
	// fence, and TTL would delete an expired item (a holder that died) with
	// its fence. Expired locks are free for the next acquire without it.
	ttl, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err == nil && ttl.TimeToLiveDescription != nil && ttl.TimeToLiveDescription.TimeToLiveStatus == ddbtypes.TimeToLiveStatusEnabled {
		rep.add(name, "ttl on expiresAt", OutcomeExisted, fmt.Sprintf("TTL deletes a dead holder's expired item and with it the key's fence: "+
			"disable it with `aws dynamodb update-time-to-live --table-name %s --time-to-live-specification Enabled=false,AttributeName=expiresAt`", table))
		return nil
	}
	rep.add(name, "ttl on expiresAt", OutcomeSkipped, "not needed: an expired lock is free for the next acquire, and the item keeps the key's fence")
	return nil
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
		rep.add(name, "bucket", OutcomeExisted, "")
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
		rep.add(name, "bucket", OutcomeCreated, "")
	default:
		return fmt.Errorf("check bucket: %w", Classify(err, res))
	}

	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)})
	if err == nil && v.Status == s3types.BucketVersioningStatusEnabled {
		rep.add(name, "versioning", OutcomeExisted, "")
	} else {
		_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
			Bucket:                  aws.String(bucket),
			VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled},
		})
		if err != nil {
			return fmt.Errorf("enable versioning: %w", Classify(err, res))
		}
		rep.add(name, "versioning", OutcomeCreated, "")
	}

	if err := ensureEncryption(ctx, c, bucket, o, res, name, rep); err != nil {
		return err
	}

	pab, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bucket)})
	if err == nil && pab.PublicAccessBlockConfiguration != nil && aws.ToBool(pab.PublicAccessBlockConfiguration.BlockPublicAcls) &&
		aws.ToBool(pab.PublicAccessBlockConfiguration.RestrictPublicBuckets) {
		rep.add(name, "public access block", OutcomeExisted, "")
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
		rep.add(name, "public access block", OutcomeCreated, "")
	case unsupported(err) || ErrorCode(err) == "MalformedXML": // MinIO answers MalformedXML
		rep.add(name, "public access block", OutcomeSkipped, "not supported by this endpoint (MinIO buckets are private unless a policy says otherwise)")
	default:
		return fmt.Errorf("block public access: %w", Classify(err, res))
	}
	return nil
}

func ensureEncryption(ctx context.Context, c *s3.Client, bucket string, o Options, res Resource, name string, rep *Report) error {
	enc, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String(bucket)})
	if err == nil && enc.ServerSideEncryptionConfiguration != nil && len(enc.ServerSideEncryptionConfiguration.Rules) > 0 {
		rep.add(name, "default encryption", OutcomeExisted, "")
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
		rep.add(name, "default encryption", OutcomeCreated, note)
	case unsupported(err) || ErrorCode(err) == "KMSNotConfigured" || strings.Contains(err.Error(), "KMS"):
		rep.add(name, "default encryption", OutcomeSkipped, "not supported by this endpoint: "+ErrorCode(err))
	default:
		return fmt.Errorf("set default encryption: %w", Classify(err, res))
	}
	return nil
}

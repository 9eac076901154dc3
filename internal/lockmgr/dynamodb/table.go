package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/deployer-dev/deployer/internal/awsbackend"
)

// Init creates, idempotently, the lock table of each dynamodb:// URL
// (`deployer backend init`, docs/aws.md#setup): see EnsureTable. It returns
// one report item per table setting; errors name the table and the fix
// (awsbackend.Classify).
func Init(ctx context.Context, urls []string, o awsbackend.Options) (awsbackend.Report, error) {
	var rep awsbackend.Report
	for _, raw := range urls {
		u, err := awsbackend.ParseDynamoDBURL(raw)
		if err != nil {
			return rep, err
		}
		cfg, err := awsbackend.LoadConfig(ctx, u.Region, o)
		if err != nil {
			return rep, fmt.Errorf("dynamodb table %q: %w", u.Table, err)
		}
		if err := EnsureTable(ctx, awsbackend.NewDynamoDBClient(cfg, o), u.Table, cfg.Region, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// CreateTableInput is the lock table of docs/aws.md#dynamodb-lock-item:
// PAY_PER_REQUEST, hash key lockKey (S), tagged ManagedBy=deployer. The
// other attributes of the item need no definition.
func CreateTableInput(table string) *ddb.CreateTableInput {
	return &ddb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(attrKey), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(attrKey), KeyType: types.KeyTypeHash}},
		Tags:                 []types.Tag{{Key: aws.String("ManagedBy"), Value: aws.String("deployer")}},
	}
}

// EnsureTable creates the lock table (CreateTableInput) if it does not exist
// and waits up to 5 minutes for it to be ACTIVE. It leaves TTL off and
// reports a table where TTL on expiresAt is on, with the command that turns
// it off (docs/aws.md#dynamodb-lock-item). region only names the table in
// messages.
func EnsureTable(ctx context.Context, c *ddb.Client, table, region string, rep *awsbackend.Report) error {
	res := awsbackend.Resource{Service: "dynamodb", Kind: "table", Name: table, Region: region}
	name := fmt.Sprintf("dynamodb table %q", table)
	_, err := c.DescribeTable(ctx, &ddb.DescribeTableInput{TableName: aws.String(table)})
	var nf *types.ResourceNotFoundException
	switch {
	case err == nil:
		rep.Add(name, "table", awsbackend.OutcomeExisted, "")
	case errors.As(err, &nf):
		_, err = c.CreateTable(ctx, CreateTableInput(table))
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return res.Wrap(err, "create table")
		}
		w := ddb.NewTableExistsWaiter(c, func(o *ddb.TableExistsWaiterOptions) {
			o.MinDelay = 200 * time.Millisecond
			o.MaxDelay = 2 * time.Second
		})
		if err := w.Wait(ctx, &ddb.DescribeTableInput{TableName: aws.String(table)}, 5*time.Minute); err != nil {
			return res.Wrap(err, "wait for table to become ACTIVE")
		}
		rep.Add(name, "table", awsbackend.OutcomeCreated, "PAY_PER_REQUEST, hash key "+attrKey)
	default:
		return res.Wrap(err, "describe table")
	}

	// TTL stays off: a lock item outlives its holders and carries the key's
	// fence, and TTL would delete an expired item (a holder that died) with
	// its fence. Expired locks are free for the next acquire without it.
	setting := "ttl on " + attrExpires
	ttl, err := c.DescribeTimeToLive(ctx, &ddb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err == nil && ttl.TimeToLiveDescription != nil && ttl.TimeToLiveDescription.TimeToLiveStatus == types.TimeToLiveStatusEnabled {
		rep.Add(name, setting, awsbackend.OutcomeExisted, fmt.Sprintf("TTL deletes a dead holder's expired item and with it the key's fence: "+
			"disable it with `aws dynamodb update-time-to-live --table-name %s --time-to-live-specification Enabled=false,AttributeName=%s`", table, attrExpires))
		return nil
	}
	rep.Add(name, setting, awsbackend.OutcomeSkipped, "not needed: an expired lock is free for the next acquire, and the item keeps the key's fence")
	return nil
}

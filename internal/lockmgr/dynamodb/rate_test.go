package dynamodb_test

import (
	"context"
	"sync/atomic"
	"testing"

	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/dynamodb"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
)

// counted counts the requests sent through a DynamoDB client.
type counted struct {
	dynamodb.API
	n *atomic.Int64
}

func (c counted) GetItem(ctx context.Context, in *ddb.GetItemInput, o ...func(*ddb.Options)) (*ddb.GetItemOutput, error) {
	c.n.Add(1)
	return c.API.GetItem(ctx, in, o...)
}

func (c counted) PutItem(ctx context.Context, in *ddb.PutItemInput, o ...func(*ddb.Options)) (*ddb.PutItemOutput, error) {
	c.n.Add(1)
	return c.API.PutItem(ctx, in, o...)
}

func (c counted) UpdateItem(ctx context.Context, in *ddb.UpdateItemInput, o ...func(*ddb.Options)) (*ddb.UpdateItemOutput, error) {
	c.n.Add(1)
	return c.API.UpdateItem(ctx, in, o...)
}

func (c counted) DeleteItem(ctx context.Context, in *ddb.DeleteItemInput, o ...func(*ddb.Options)) (*ddb.DeleteItemOutput, error) {
	c.n.Add(1)
	return c.API.DeleteItem(ctx, in, o...)
}

func (c counted) Scan(ctx context.Context, in *ddb.ScanInput, o ...func(*ddb.Options)) (*ddb.ScanOutput, error) {
	c.n.Add(1)
	return c.API.Scan(ctx, in, o...)
}

// BenchmarkWaitingRequestRate: the DynamoDB requests of a waiting process,
// at the head of the queue and behind it (docs/locking.md#wait-queue).
func BenchmarkWaitingRequestRate(b *testing.B) {
	_, table, o := awstest.NewTable(b)
	locktest.BenchWaitingRate(b, func(b *testing.B) (lockmgr.Backend, *atomic.Int64) {
		cfg, err := awsbackend.LoadConfig(context.Background(), awstest.Region(), o)
		if err != nil {
			b.Fatal(err)
		}
		n := &atomic.Int64{}
		return dynamodb.New(counted{awsbackend.NewDynamoDBClient(cfg, o), n}, table, cfg.Region), n
	})
}

package dynamodb_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
)

// BenchmarkDynamoDB compares one lock cycle with the raw conditional PutItem +
// DeleteItem on the same server, in one run (SPEC 12), and with the raw floor
// of its own protocol (counter UpdateItem + PutItem + DeleteItem).
func BenchmarkDynamoDB(b *testing.B) {
	client, table, o := awstest.NewTable(b)
	ctx := context.Background()
	b.Run("raw_put_delete", func(b *testing.B) {
		key := "bench:raw:" + uuid.NewString()
		for b.Loop() {
			id := uuid.NewString()
			_, err := client.PutItem(ctx, &ddb.PutItemInput{
				TableName: aws.String(table),
				Item: map[string]types.AttributeValue{
					"lockKey": &types.AttributeValueMemberS{Value: key}, "lockId": &types.AttributeValueMemberS{Value: id},
					"expiresAt": &types.AttributeValueMemberN{Value: "9999999999"},
				},
				ConditionExpression:       aws.String("attribute_not_exists(lockKey) OR expiresAt < :now"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":now": &types.AttributeValueMemberN{Value: "1"}},
			})
			if err != nil {
				b.Fatal(err)
			}
			_, err = client.DeleteItem(ctx, &ddb.DeleteItemInput{
				TableName: aws.String(table), Key: map[string]types.AttributeValue{"lockKey": &types.AttributeValueMemberS{Value: key}},
				ConditionExpression:       aws.String("lockId = :id"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: id}},
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	// The floor of the protocol the issue fixes: the fence must outlive a
	// DeleteItem release, so it comes from a counter item, one more request.
	b.Run("raw_counter_put_delete", func(b *testing.B) {
		key := "bench:raw3:" + uuid.NewString()
		for b.Loop() {
			id := uuid.NewString()
			_, err := client.UpdateItem(ctx, &ddb.UpdateItemInput{
				TableName:                 aws.String(table),
				Key:                       map[string]types.AttributeValue{"lockKey": &types.AttributeValueMemberS{Value: "fence#" + key}},
				UpdateExpression:          aws.String("ADD fence :one"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
				ReturnValues:              types.ReturnValueUpdatedNew,
			})
			if err != nil {
				b.Fatal(err)
			}
			_, err = client.PutItem(ctx, &ddb.PutItemInput{
				TableName: aws.String(table),
				Item: map[string]types.AttributeValue{
					"lockKey": &types.AttributeValueMemberS{Value: key}, "lockId": &types.AttributeValueMemberS{Value: id},
					"expiresAt": &types.AttributeValueMemberN{Value: "9999999999"},
				},
				ConditionExpression:       aws.String("attribute_not_exists(lockKey) OR expiresAt < :now"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":now": &types.AttributeValueMemberN{Value: "1"}},
			})
			if err != nil {
				b.Fatal(err)
			}
			_, err = client.DeleteItem(ctx, &ddb.DeleteItemInput{
				TableName: aws.String(table), Key: map[string]types.AttributeValue{"lockKey": &types.AttributeValueMemberS{Value: key}},
				ConditionExpression:       aws.String("lockId = :id"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: id}},
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("acquire_release", func(b *testing.B) {
		be := open(b, table, o)
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
	locktest.Bench(b, func(b *testing.B) lockmgr.Backend { return open(b, table, o) })
}

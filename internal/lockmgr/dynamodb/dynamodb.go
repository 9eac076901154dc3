package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// API is the part of the DynamoDB client the backend calls.
type API interface {
	GetItem(ctx context.Context, in *ddb.GetItemInput, optFns ...func(*ddb.Options)) (*ddb.GetItemOutput, error)
	PutItem(ctx context.Context, in *ddb.PutItemInput, optFns ...func(*ddb.Options)) (*ddb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *ddb.UpdateItemInput, optFns ...func(*ddb.Options)) (*ddb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *ddb.DeleteItemInput, optFns ...func(*ddb.Options)) (*ddb.DeleteItemOutput, error)
	Scan(ctx context.Context, in *ddb.ScanInput, optFns ...func(*ddb.Options)) (*ddb.ScanOutput, error)
}

// Backend is the DynamoDB lock backend. It is safe for concurrent use.
type Backend struct {
	awsbackend.TransientErrors // Transient

	api   API
	table string
	res   awsbackend.Resource
}

// The lock backend contract and the optional interfaces it implements;
// Transient comes from the embedded awsbackend.TransientErrors.
var (
	_ lockmgr.Backend          = (*Backend)(nil)
	_ lockmgr.ServerClock      = (*Backend)(nil)
	_ lockmgr.TransientChecker = (*Backend)(nil)
	_ lockmgr.Remover          = (*Backend)(nil)
)

// New returns a backend on table through api; region only names the table in
// error messages.
func New(api API, table, region string) *Backend {
	return &Backend{api: api, table: table, res: awsbackend.Resource{Service: "dynamodb", Kind: "table", Name: table, Region: region}}
}

// Open parses raw ("dynamodb://TABLE?region=R"), loads the AWS configuration
// from the SDK chain and returns the backend. It does not touch the network:
// a missing table is reported by the first call, naming `deployer backend init`.
func Open(ctx context.Context, raw string, o awsbackend.Options) (*Backend, error) {
	u, err := awsbackend.ParseDynamoDBURL(raw)
	if err != nil {
		return nil, err
	}
	cfg, err := awsbackend.LoadConfig(ctx, u.Region, o)
	if err != nil {
		return nil, fmt.Errorf("lock backend %s: %w", raw, err)
	}
	return New(awsbackend.NewDynamoDBClient(cfg, o), u.Table, cfg.Region), nil
}

func (b *Backend) key(k string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrKey: s(k)}
}

func isCondFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// TryAcquire writes rec onto the key's item with one UpdateItem conditional
// on no live holder (`attribute_not_exists(lockId) OR expiresAt < :now`,
// :now = rec.LockedAt: the original design's condition on the item that also carries the
// fence) and increments the item's fence in the same write, so every
// acquisition of the key gets a fence larger than any before it. A live holder
// gives *lockmgr.HeldError with the holder read back with ConsistentRead.
func (b *Backend) TryAcquire(ctx context.Context, rec lockmgr.Record) (lockmgr.Record, error) {
	for attempt := 0; ; attempt++ {
		fence, err := b.acquire(ctx, rec)
		if err == nil {
			rec.Fence = fence
			return rec, nil
		}
		if !isCondFailed(err) {
			return lockmgr.Record{}, b.res.Wrap(err, "acquire lock %q", rec.LockKey)
		}
		holder, gerr := b.Get(ctx, rec.LockKey)
		switch {
		case gerr == nil && holder.LockID == rec.LockID:
			// Our own write: its reply was lost and the SDK's retry found
			// the lock taken, by us (docs/locking.md, "Lost replies").
			return holder, nil
		case gerr == nil && !holder.Expired(time.Unix(rec.LockedAt, 0)):
			return lockmgr.Record{}, &lockmgr.HeldError{Record: holder}
		case gerr != nil && !errors.Is(gerr, lockmgr.ErrNotFound):
			return lockmgr.Record{}, gerr
		case attempt >= 2:
			// Other holders keep taking and releasing the key between our
			// write and our read: it is contended, which is "held" to the
			// Manager (it waits with backoff, or fails with exit 3).
			if gerr != nil {
				holder = lockmgr.Record{LockKey: rec.LockKey, LockedBy: "(another holder: taken and released while acquiring)"}
			}
			return lockmgr.Record{}, &lockmgr.HeldError{Record: holder}
		}
		// Released, or taken over and expired, between our write and our
		// read: try again.
	}
}

// acquire is TryAcquire's one conditional UpdateItem; it returns the new fence.
func (b *Backend) acquire(ctx context.Context, rec lockmgr.Record) (int64, error) {
	out, err := b.api.UpdateItem(ctx, &ddb.UpdateItemInput{
		TableName:           aws.String(b.table),
		Key:                 b.key(rec.LockKey),
		UpdateExpression:    aws.String(acquireUpdate),
		ConditionExpression: aws.String("attribute_not_exists(lockId) OR expiresAt < :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":id": s(rec.LockID), ":by": s(rec.LockedBy), ":at": n(rec.LockedAt), ":exp": n(rec.ExpiresAt),
			":hb": n(rec.LastHeartbeat), ":md": &types.AttributeValueMemberM{Value: metadataToMap(rec.Metadata)},
			":one": n(1), ":now": n(rec.LockedAt),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, err
	}
	v, ok := out.Attributes[attrFence].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("acquire lock %q: UpdateItem returned no fence", rec.LockKey)
	}
	return strconv.ParseInt(v.Value, 10, 64)
}

// Heartbeat sets lastHeartbeat and expiresAt (epoch seconds) iff the record's
// lockId is lockID; ErrLockLost otherwise (released or taken over).
func (b *Backend) Heartbeat(ctx context.Context, key, lockID string, at, expiresAt time.Time) error {
	_, err := b.api.UpdateItem(ctx, &ddb.UpdateItemInput{
		TableName:           aws.String(b.table),
		Key:                 b.key(key),
		UpdateExpression:    aws.String("SET lastHeartbeat = :at, expiresAt = :exp"),
		ConditionExpression: aws.String("lockId = :id"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":at": n(at.Unix()), ":exp": n(expiresAt.Unix()), ":id": s(lockID),
		},
	})
	if isCondFailed(err) {
		return fmt.Errorf("heartbeat lock %q: %w", key, lockmgr.ErrLockLost)
	}
	if err != nil {
		return b.res.Wrap(err, "heartbeat lock %q", key)
	}
	return nil
}

// Release clears the holder's attributes from the item iff its lockId is
// lockID, keeping lockKey and fence (and no expiresAt, so DynamoDB's TTL never
// deletes the item and its fence), and marks the item with a releaseId of its
// own; ErrLockLost otherwise. When the condition fails because the item
// already carries our releaseId, our first try was applied and its reply lost:
// that is our release, not a takeover.
func (b *Backend) Release(ctx context.Context, key, lockID string) error {
	rid := uuid.NewString()
	_, err := b.api.UpdateItem(ctx, &ddb.UpdateItemInput{
		TableName:                 aws.String(b.table),
		Key:                       b.key(key),
		UpdateExpression:          aws.String(releaseUpdate),
		ConditionExpression:       aws.String("lockId = :id"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": s(lockID), ":rid": s(rid)},
	})
	if isCondFailed(err) {
		out, gerr := b.api.GetItem(ctx, &ddb.GetItemInput{TableName: aws.String(b.table), Key: b.key(key), ConsistentRead: aws.Bool(true)})
		if gerr == nil {
			if v, ok := out.Item[attrReleaseID].(*types.AttributeValueMemberS); ok && v.Value == rid {
				return nil
			}
		}
		return fmt.Errorf("release lock %q: %w", key, lockmgr.ErrLockLost)
	}
	if err != nil {
		return b.res.Wrap(err, "release lock %q", key)
	}
	return nil
}

// Get returns the record of key with a strongly consistent read, expired or
// not; lockmgr.ErrNotFound if there is none or it was released (an item with
// no lockId only carries the key's fence).
func (b *Backend) Get(ctx context.Context, key string) (lockmgr.Record, error) {
	out, err := b.api.GetItem(ctx, &ddb.GetItemInput{
		TableName: aws.String(b.table), Key: b.key(key), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return lockmgr.Record{}, b.res.Wrap(err, "read lock %q", key)
	}
	if _, held := out.Item[attrID]; !held {
		return lockmgr.Record{}, fmt.Errorf("lock %q: %w", key, lockmgr.ErrNotFound)
	}
	return fromItem(out.Item)
}

// List scans the table with ConsistentRead for records whose key begins with
// prefix, following pagination, released items (no lockId) left out; sorted
// by key.
func (b *Backend) List(ctx context.Context, prefix string) ([]lockmgr.Record, error) {
	in := &ddb.ScanInput{
		TableName:        aws.String(b.table),
		ConsistentRead:   aws.Bool(true),
		FilterExpression: aws.String("attribute_exists(lockId)"),
	}
	if prefix != "" {
		in.FilterExpression = aws.String("begins_with(lockKey, :p) AND attribute_exists(lockId)")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":p": s(prefix)}
	}
	var out []lockmgr.Record
	for {
		page, err := b.api.Scan(ctx, in)
		if err != nil {
			return nil, b.res.Wrap(err, "list locks")
		}
		for _, item := range page.Items {
			r, err := fromItem(item)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LockKey < out[j].LockKey })
	return out, nil
}

// Close does nothing: the SDK client holds no resources that need closing.
func (b *Backend) Close() error { return nil }

// ServerTime returns the Date of a DynamoDB reply (one strongly consistent
// GetItem of an unused key), to whole seconds.
func (b *Backend) ServerTime(ctx context.Context) (time.Time, error) {
	return awsbackend.ServerTime("dynamodb", b.res, func(capture func(*middleware.Stack) error) error {
		_, err := b.api.GetItem(ctx, &ddb.GetItemInput{TableName: aws.String(b.table), Key: b.key("deployer:clock"), ConsistentRead: aws.Bool(true)},
			func(o *ddb.Options) { o.APIOptions = append(o.APIOptions, capture) })
		return err
	})
}

// Remove implements lockmgr.Remover: deletes the item of key (wait-queue
// records only; a lock item keeps its fence after release).
func (b *Backend) Remove(ctx context.Context, key string) error {
	_, err := b.api.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: aws.String(b.table), Key: b.key(key)})
	return b.res.Wrap(err, "remove %q", key)
}

package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// object is the stored JSON: the lock record plus the tombstone flag and the
// id of the Release call that wrote the tombstone.
type object struct {
	lockmgr.Record
	Released  bool   `json:"released,omitempty"`
	ReleaseID string `json:"releaseId,omitempty"`
}

func (o object) free(now int64) bool { return o.Released || o.ExpiresAt < now }

type cached struct {
	etag string
	obj  object
}

// Backend is the S3 lock backend. It is safe for concurrent use.
type Backend struct {
	awsbackend.TransientErrors // Transient

	api   awsbackend.S3API
	url   awsbackend.S3URL
	res   awsbackend.Resource
	sse   awsbackend.Options
	mu    sync.Mutex
	cache map[string]cached // lock key -> the version this client last wrote or read (Get)
}

// The lock backend contract and the optional interfaces it implements;
// Transient comes from the embedded awsbackend.TransientErrors.
var (
	_ lockmgr.Backend          = (*Backend)(nil)
	_ lockmgr.ServerClock      = (*Backend)(nil)
	_ lockmgr.TransientChecker = (*Backend)(nil)
	_ lockmgr.Remover          = (*Backend)(nil)
)

// New returns a backend on u through api. o.SSE/o.KMSKeyID, if set, apply to
// every PUT.
func New(api awsbackend.S3API, u awsbackend.S3URL, o awsbackend.Options) *Backend {
	return &Backend{api: api, url: u, sse: o, cache: map[string]cached{},
		res: awsbackend.Resource{Service: "s3", Kind: "bucket", Name: u.Bucket, Region: u.Region}}
}

// Open opens raw ("s3://BUCKET[/prefix]?region=R&path_style=true") with
// awsbackend.OpenS3 and returns the backend. It makes no request: reads
// never write, and the first write probes the server's conditional writes
// (CheckWrites).
func Open(ctx context.Context, raw string, o awsbackend.Options) (*Backend, error) {
	api, u, err := awsbackend.OpenS3(ctx, raw, "lock backend", o)
	if err != nil {
		return nil, err
	}
	return New(api, u, o), nil
}

func (b *Backend) objectKey(lockKey string) string {
	return b.url.Key("locks/" + url.PathEscape(lockKey) + ".json")
}

// CheckWrites refuses a server that ignores conditional writes
// (awsbackend.EnsureConditionalWrites: once per process and bucket). Every
// write calls it first; a command that will write calls it when it opens
// the backend, before it changes anything. Reads never call it, so a role
// that may only read can list and read locks (docs/aws.md#read-only-iam-policy).
func (b *Backend) CheckWrites(ctx context.Context) error {
	return awsbackend.EnsureConditionalWrites(ctx, b.api, b.url)
}

// read returns the object of key and its ETag; found is false when absent.
func (b *Backend) read(ctx context.Context, key string) (obj object, etag string, found bool, err error) {
	out, err := b.api.GetObject(ctx, &s3api.GetObjectInput{Bucket: aws.String(b.url.Bucket), Key: aws.String(b.objectKey(key))})
	if err != nil {
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) || awsbackend.IsNotFound(err) {
			return object{}, "", false, nil
		}
		return object{}, "", false, b.res.Wrap(err, "read lock %q", key)
	}
	defer out.Body.Close()
	loc := "s3://" + b.url.Bucket + "/" + b.objectKey(key)
	remove := "aws s3 rm '" + loc + "'"
	if out.ContentLength != nil {
		if err := lockmgr.TooLarge(key, loc, remove, *out.ContentLength); err != nil {
			return object{}, "", false, err
		}
	}
	data, err := lockmgr.ReadRecord(out.Body, key, loc, remove)
	if lockmgr.IsRecordTooLarge(err) {
		return object{}, "", false, err
	}
	if err != nil {
		return object{}, "", false, fmt.Errorf("read lock %q: %w", key, err)
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return object{}, "", false, fmt.Errorf("lock %q at s3://%s/%s is not a lock record: %w (delete it if it is garbage)", key, b.url.Bucket, b.objectKey(key), err)
	}
	return obj, aws.ToString(out.ETag), true, nil
}

// errRaced: the conditional PUT lost (412/409, or the object vanished).
var errRaced = errors.New("raced")

// write PUTs obj under key if the current version is ifMatch ("" = must not
// exist) and returns the new ETag; errRaced when the precondition failed.
func (b *Backend) write(ctx context.Context, key string, obj object, ifMatch string) (string, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	in := &s3api.PutObjectInput{
		Bucket: aws.String(b.url.Bucket), Key: aws.String(b.objectKey(key)),
		Body: bytes.NewReader(data), ContentType: aws.String("application/json"),
	}
	if ifMatch == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(ifMatch)
	}
	b.sse.ApplySSE(in)
	out, err := b.api.PutObject(ctx, in)
	if err != nil {
		if awsbackend.IsPreconditionFailed(err) || awsbackend.IsNotFound(err) {
			b.forget(key)
			return "", errRaced
		}
		return "", awsbackend.Classify(err, b.res)
	}
	etag := aws.ToString(out.ETag)
	b.mu.Lock()
	b.cache[key] = cached{etag: etag, obj: obj}
	b.mu.Unlock()
	return etag, nil
}

func (b *Backend) forget(key string) {
	b.mu.Lock()
	delete(b.cache, key)
	b.mu.Unlock()
}

func (b *Backend) cachedVersion(key string) (cached, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.cache[key]
	return c, ok
}

// current returns the object to base a conditional write on: on the first
// attempt the version this client last wrote if usable (accept says so),
// else a fresh read.
func (b *Backend) current(ctx context.Context, key string, attempt int, accept func(object) bool) (object, string, bool, error) {
	if attempt == 0 {
		if c, ok := b.cachedVersion(key); ok && accept(c.obj) {
			return c.obj, c.etag, true, nil
		}
	}
	return b.read(ctx, key)
}

const maxAttempts = 5

// TryAcquire writes rec if the key has no record, a released one or one with
// expiresAt < rec.LockedAt, by a PUT conditional on the version read; the
// fence is the previous record's plus one. A live holder gives
// *lockmgr.HeldError.
func (b *Backend) TryAcquire(ctx context.Context, rec lockmgr.Record) (lockmgr.Record, error) {
	if err := b.CheckWrites(ctx); err != nil {
		return lockmgr.Record{}, err
	}
	for attempt := range maxAttempts {
		cur, etag, found, err := b.current(ctx, rec.LockKey, attempt, func(o object) bool { return o.free(rec.LockedAt) })
		if err != nil {
			return lockmgr.Record{}, fmt.Errorf("acquire lock %q: %w", rec.LockKey, err)
		}
		if found && !cur.Released && cur.LockID == rec.LockID {
			// Our own PUT: its reply was lost and the retry (the SDK's or
			// ours) found the record, ours (docs/locking.md, "Lost replies").
			return cur.Record, nil
		}
		if found && !cur.free(rec.LockedAt) {
			return lockmgr.Record{}, &lockmgr.HeldError{Record: cur.Record}
		}
		rec.Fence = cur.Fence + 1 // 1 for a new key
		_, err = b.write(ctx, rec.LockKey, object{Record: rec}, etag)
		if err == nil {
			return rec, nil
		}
		if !errors.Is(err, errRaced) {
			return lockmgr.Record{}, fmt.Errorf("acquire lock %q: %w", rec.LockKey, err)
		}
	}
	return lockmgr.Record{}, fmt.Errorf("acquire lock %q: the record changed under %d attempts in a row; retry", rec.LockKey, maxAttempts)
}

// update rewrites the record of key with change iff its lockId is lockID and
// it is not released; ErrLockLost otherwise. done reports a record that
// already holds this call's change (a retried PUT whose first reply was lost).
func (b *Backend) update(ctx context.Context, op, key, lockID string, change func(*object), done func(object) bool) error {
	if err := b.CheckWrites(ctx); err != nil {
		return err
	}
	for attempt := range maxAttempts {
		cur, etag, found, err := b.current(ctx, key, attempt, func(o object) bool { return o.LockID == lockID && !o.Released })
		if err != nil {
			return fmt.Errorf("%s lock %q: %w", op, key, err)
		}
		if found && done(cur) {
			return nil
		}
		if !found || cur.Released || cur.LockID != lockID {
			return fmt.Errorf("%s lock %q: %w", op, key, lockmgr.ErrLockLost)
		}
		change(&cur)
		_, err = b.write(ctx, key, cur, etag)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errRaced) {
			return fmt.Errorf("%s lock %q: %w", op, key, err)
		}
	}
	return fmt.Errorf("%s lock %q: the record changed under %d attempts in a row; retry", op, key, maxAttempts)
}

// Heartbeat sets lastHeartbeat=at and expiresAt (epoch seconds) iff the
// record's lockId is lockID; ErrLockLost otherwise.
func (b *Backend) Heartbeat(ctx context.Context, key, lockID string, at, expiresAt time.Time) error {
	return b.update(ctx, "heartbeat", key, lockID, func(o *object) {
		o.LastHeartbeat, o.ExpiresAt = at.Unix(), expiresAt.Unix()
	}, func(o object) bool {
		return !o.Released && o.LockID == lockID && o.LastHeartbeat == at.Unix() && o.ExpiresAt == expiresAt.Unix()
	})
}

// Release replaces the record by a tombstone (released, expiresAt 0, lockId
// and fence kept, releaseId naming this call) iff its lockId is lockID;
// ErrLockLost otherwise. A tombstone with this call's releaseId is this
// call's own PUT whose reply was lost: released, not lost.
func (b *Backend) Release(ctx context.Context, key, lockID string) error {
	rid := uuid.NewString()
	return b.update(ctx, "release", key, lockID, func(o *object) {
		o.Released, o.ExpiresAt, o.ReleaseID = true, 0, rid
	}, func(o object) bool {
		return o.Released && o.LockID == lockID && o.ReleaseID == rid
	})
}

// Get returns the record of key, expired or not; lockmgr.ErrNotFound when
// absent or released.
func (b *Backend) Get(ctx context.Context, key string) (lockmgr.Record, error) {
	obj, etag, found, err := b.read(ctx, key)
	if err != nil {
		return lockmgr.Record{}, err
	}
	if found {
		// A waiter that sees the record released writes next: its
		// conditional PUT can go on this version without reading it again
		// (a newer one fails the PUT, which then reads).
		b.mu.Lock()
		b.cache[key] = cached{etag: etag, obj: obj}
		b.mu.Unlock()
	}
	if !found || obj.Released {
		return lockmgr.Record{}, fmt.Errorf("lock %q: %w", key, lockmgr.ErrNotFound)
	}
	return obj.Record, nil
}

// List lists {prefix}/locks/ (S3 listings are strongly consistent) and reads
// every record whose key starts with prefix, released ones left out; sorted
// by key.
func (b *Backend) List(ctx context.Context, prefix string) ([]lockmgr.Record, error) {
	base := b.url.Key("locks/")
	in := &s3api.ListObjectsV2Input{Bucket: aws.String(b.url.Bucket), Prefix: aws.String(base + url.PathEscape(prefix))}
	var keys []string
	for {
		page, err := b.api.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, b.res.Wrap(err, "list locks")
		}
		for _, o := range page.Contents {
			name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(o.Key), base), ".json")
			if k, err := url.PathUnescape(name); err == nil && !strings.Contains(name, "/") {
				keys = append(keys, k)
			}
		}
		if !aws.ToBool(page.IsTruncated) {
			break
		}
		in.ContinuationToken = page.NextContinuationToken
	}
	return b.readAll(ctx, keys)
}

// readAll reads the records of keys with up to 8 requests in flight.
func (b *Backend) readAll(ctx context.Context, keys []string) ([]lockmgr.Record, error) {
	objs := make([]object, len(keys))
	found := make([]bool, len(keys))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			objs[i], _, found[i], errs[i] = b.read(ctx, k)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("list locks: %w", err)
	}
	var out []lockmgr.Record
	for i, o := range objs {
		if found[i] && !o.Released {
			out = append(out, o.Record)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LockKey < out[j].LockKey })
	return out, nil
}

// Close forgets cached versions; it does not release locks.
func (b *Backend) Close() error {
	b.mu.Lock()
	b.cache = map[string]cached{}
	b.mu.Unlock()
	return nil
}

// ServerTime returns the Date of an S3 reply (a one-key listing of the lock
// prefix), to whole seconds.
func (b *Backend) ServerTime(ctx context.Context) (time.Time, error) {
	return awsbackend.ServerTime("s3", b.res, func(capture func(*middleware.Stack) error) error {
		_, err := b.api.ListObjectsV2(ctx, &s3api.ListObjectsV2Input{Bucket: aws.String(b.url.Bucket), Prefix: aws.String(b.url.Key("locks/")), MaxKeys: aws.Int32(1)},
			func(o *s3api.Options) { o.APIOptions = append(o.APIOptions, capture) })
		return err
	})
}

// Remove implements lockmgr.Remover: deletes the object of key (wait-queue
// records only; a lock object keeps its tombstone and fence after release).
func (b *Backend) Remove(ctx context.Context, key string) error {
	b.forget(key)
	_, err := b.api.DeleteObject(ctx, &s3api.DeleteObjectInput{Bucket: aws.String(b.url.Bucket), Key: aws.String(b.objectKey(key))})
	return b.res.Wrap(err, "remove %q", key)
}

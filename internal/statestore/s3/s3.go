package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Backend is the S3 state backend. It is safe for concurrent use.
type Backend struct {
	api awsbackend.S3API
	url awsbackend.S3URL
	res awsbackend.Resource
	o   awsbackend.Options
}

var _ statestore.Backend = (*Backend)(nil)

// New returns a backend on u through api; o.SSE ("", "AES256", "aws:kms") and
// o.KMSKeyID apply to every PUT.
func New(api awsbackend.S3API, u awsbackend.S3URL, o awsbackend.Options) (*Backend, error) {
	switch o.SSE {
	case "", "AES256", "aws:kms":
	default:
		return nil, fmt.Errorf("backend.sse %q: want AES256 or aws:kms (or leave it empty for the bucket default)", o.SSE)
	}
	if o.KMSKeyID != "" && o.SSE != "aws:kms" {
		return nil, fmt.Errorf("backend.kms_key_id is set but backend.sse is %q: set sse: aws:kms", o.SSE)
	}
	return &Backend{api: api, url: u, o: o, res: awsbackend.Resource{Service: "s3", Kind: "bucket", Name: u.Bucket, Region: u.Region}}, nil
}

// Open opens raw ("s3://BUCKET[/prefix]?region=R&path_style=true") with
// awsbackend.OpenS3 and returns the backend. It makes no request: reads
// never write, and the first write probes the server's conditional writes
// (CheckWrites).
func Open(ctx context.Context, raw string, o awsbackend.Options) (*Backend, error) {
	api, u, err := awsbackend.OpenS3(ctx, raw, "state backend", o)
	if err != nil {
		return nil, err
	}
	return New(api, u, o)
}

func (b *Backend) dir(stack, env string) string {
	return b.url.Key("stacks/" + stack + "/" + env + "/")
}
func (b *Backend) stateKey(stack, env string) string   { return b.dir(stack, env) + "state.json" }
func (b *Backend) historyDir(stack, env string) string { return b.dir(stack, env) + "history/" }

// Location returns "s3://bucket/[prefix/]stacks/{stack}/{env}/state.json".
func (b *Backend) Location(stack, env string) string {
	return "s3://" + b.url.Bucket + "/" + b.stateKey(stack, env)
}

// CheckWrites refuses a server that ignores conditional writes
// (awsbackend.EnsureConditionalWrites: once per process and bucket). Write
// calls it first; a command that will write calls it when it opens the
// backend, before it changes anything. Reads never call it, so a role that
// may only read can plan and inspect (docs/aws.md#read-only-iam-policy).
func (b *Backend) CheckWrites(ctx context.Context) error {
	return awsbackend.EnsureConditionalWrites(ctx, b.api, b.url)
}

func (b *Backend) get(ctx context.Context, key string) ([]byte, string, error) {
	out, err := b.api.GetObject(ctx, &s3api.GetObjectInput{Bucket: aws.String(b.url.Bucket), Key: aws.String(key)})
	if err != nil {
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) || awsbackend.IsNotFound(err) {
			return nil, "", fmt.Errorf("s3://%s/%s: %w", b.url.Bucket, key, statestore.ErrNotFound)
		}
		return nil, "", b.res.Wrap(err, "read s3://%s/%s", b.url.Bucket, key)
	}
	defer out.Body.Close()
	loc := "s3://" + b.url.Bucket + "/" + key
	if out.ContentLength != nil {
		if err := statestore.CheckReadSize(ctx, loc, *out.ContentLength); err != nil {
			return nil, "", err
		}
	}
	data, err := statestore.LimitedRead(ctx, out.Body, loc)
	var tl *statestore.TooLargeError
	if errors.As(err, &tl) {
		return nil, "", err
	}
	if err != nil {
		return nil, "", fmt.Errorf("read s3://%s/%s: %w", b.url.Bucket, key, err)
	}
	return data, aws.ToString(out.ETag), nil
}

// Read returns state.json of stack/env and its ETag; statestore.ErrNotFound.
func (b *Backend) Read(ctx context.Context, stack, env string) ([]byte, statestore.Version, error) {
	data, etag, err := b.get(ctx, b.stateKey(stack, env))
	return data, statestore.Version(etag), err
}

// ReadVersion returns the ETag of state.json of stack/env from a HEAD
// request, without its body (statestore.VersionReader; the same
// s3:GetObject permission as Read): the Version Read gives.
// statestore.ErrNotFound (wrapped) when there is none.
func (b *Backend) ReadVersion(ctx context.Context, stack, env string) (statestore.Version, error) {
	key := b.stateKey(stack, env)
	out, err := b.api.HeadObject(ctx, &s3api.HeadObjectInput{Bucket: aws.String(b.url.Bucket), Key: aws.String(key)})
	if err != nil {
		var nf *types.NotFound
		if errors.As(err, &nf) || awsbackend.IsNotFound(err) {
			return "", fmt.Errorf("s3://%s/%s: %w", b.url.Bucket, key, statestore.ErrNotFound)
		}
		return "", b.res.Wrap(err, "read the version of s3://%s/%s", b.url.Bucket, key)
	}
	return statestore.Version(aws.ToString(out.ETag)), nil
}

var _ statestore.VersionReader = (*Backend)(nil)

func (b *Backend) put(ctx context.Context, key string, data []byte, ifMatch, ifNoneMatch *string, meta map[string]string) (string, error) {
	in := &s3api.PutObjectInput{
		Bucket: aws.String(b.url.Bucket), Key: aws.String(key), Body: bytes.NewReader(data),
		ContentType: aws.String("application/json"), IfMatch: ifMatch, IfNoneMatch: ifNoneMatch, Metadata: meta,
	}
	b.o.ApplySSE(in)
	out, err := b.api.PutObject(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// Write PUTs the history snapshot (If-None-Match: *), then state.json with
// If-Match: req.Prev, or If-None-Match: * when Prev is "". A failed
// precondition is resolved by reading back: an object holding exactly
// req.Document is our own write whose reply was lost (the SDK retried it);
// anything else is *statestore.ConflictError (the snapshot of the lost write
// is deleted again, best effort). It returns the new ETag. req.Lock is not
// checked: S3 cannot check it atomically; the ETag CAS protects the state.
func (b *Backend) Write(ctx context.Context, req statestore.WriteRequest) (statestore.Version, error) {
	if err := b.CheckWrites(ctx); err != nil {
		return "", err
	}
	loc := b.Location(req.Stack, req.Env)
	// write-id names this call's PUTs, so that a PUT the SDK retried after
	// its reply was lost can tell its own object from another writer's.
	meta := map[string]string{"serial": strconv.FormatInt(req.Serial, 10), "lineage": req.Lineage, "write-id": uuid.NewString()}
	if req.DeploymentID != "" {
		meta["deployment-id"] = req.DeploymentID
	}
	snap := b.historyDir(req.Stack, req.Env) + statestore.SnapshotName(req.Time, req.Serial)
	if _, err := b.put(ctx, snap, req.Document, nil, aws.String("*"), meta); err != nil && !b.ours(ctx, err, snap, req.Document, meta["write-id"]) {
		if awsbackend.IsPreconditionFailed(err) {
			return "", &statestore.ConflictError{Location: loc,
				Reason: fmt.Sprintf("history snapshot %s already exists: another write of serial %d raced this one; reload and try again", snap, req.Serial)}
		}
		return "", b.res.Wrap(err, "write history snapshot s3://%s/%s", b.url.Bucket, snap)
	}
	var ifMatch, ifNoneMatch *string
	if req.Prev == "" {
		ifNoneMatch = aws.String("*")
	} else {
		ifMatch = aws.String(string(req.Prev))
	}
	etag, err := b.put(ctx, b.stateKey(req.Stack, req.Env), req.Document, ifMatch, ifNoneMatch, meta)
	if err == nil {
		return statestore.Version(etag), nil
	}
	if awsbackend.IsPreconditionFailed(err) {
		// A lost reply to our own PUT looks like a lost CAS to the SDK's
		// retry: state.json holding exactly our document is our write.
		if etag, ok := b.readBack(ctx, b.stateKey(req.Stack, req.Env), req.Document, meta["write-id"]); ok {
			return statestore.Version(etag), nil
		}
	}
	if awsbackend.IsPreconditionFailed(err) || awsbackend.IsNotFound(err) {
		_, _ = b.api.DeleteObject(context.WithoutCancel(ctx), &s3api.DeleteObjectInput{Bucket: aws.String(b.url.Bucket), Key: aws.String(snap)})
		reason := "state was written by someone else since it was read"
		if req.Prev == "" {
			reason = "state was created by someone else since it was read"
		}
		return "", &statestore.ConflictError{Location: loc, Reason: reason}
	}
	return "", b.res.Wrap(err, "write %s", loc)
}

// ours reports whether err is a failed precondition on key whose object is
// our own PUT (see readBack), applied, whose reply was lost.
func (b *Backend) ours(ctx context.Context, err error, key string, doc []byte, writeID string) bool {
	if !awsbackend.IsPreconditionFailed(err) {
		return false
	}
	_, ok := b.readBack(ctx, key, doc, writeID)
	return ok
}

// readBack returns the ETag of the object at key if it is the one this Write
// call PUT: its write-id metadata is writeID and its bytes are doc (the
// document names its serial, lineage, deployment and checksums).
func (b *Backend) readBack(ctx context.Context, key string, doc []byte, writeID string) (string, bool) {
	out, err := b.api.GetObject(ctx, &s3api.GetObjectInput{Bucket: aws.String(b.url.Bucket), Key: aws.String(key)})
	if err != nil {
		return "", false
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, int64(len(doc))+1))
	if err != nil || out.Metadata["write-id"] != writeID || !bytes.Equal(data, doc) {
		return "", false
	}
	return aws.ToString(out.ETag), true
}

// ListSnapshots lists the snapshots of stack/env in key order, every one
// (statestore.Store orders and marks them). Objects with other names are
// ignored.
func (b *Backend) ListSnapshots(ctx context.Context, stack, env string) ([]statestore.SnapshotInfo, error) {
	dir := b.historyDir(stack, env)
	in := &s3api.ListObjectsV2Input{Bucket: aws.String(b.url.Bucket), Prefix: aws.String(dir)}
	out := []statestore.SnapshotInfo{}
	for {
		page, err := b.api.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, b.res.Wrap(err, "list history of %s", b.Location(stack, env))
		}
		for _, o := range page.Contents {
			if info, err := statestore.ParseSnapshotName(aws.ToString(o.Key)[len(dir):]); err == nil {
				out = append(out, info)
			}
		}
		if !aws.ToBool(page.IsTruncated) {
			break
		}
		in.ContinuationToken = page.NextContinuationToken
	}
	return out, nil
}

// ReadSnapshot returns the object of the snapshot sn.Name;
// statestore.ErrNotFound (wrapped) if there is none.
func (b *Backend) ReadSnapshot(ctx context.Context, stack, env string, sn statestore.SnapshotInfo) ([]byte, error) {
	if _, err := statestore.ParseSnapshotName(sn.Name); err != nil {
		return nil, fmt.Errorf("read history snapshot: %w", err)
	}
	data, _, err := b.get(ctx, b.historyDir(stack, env)+sn.Name)
	return data, err
}

// Close does nothing: the SDK client holds no resources that need closing.
func (b *Backend) Close() error { return nil }

package awsbackend

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"
)

// ErrConditionalWritesIgnored: the S3 server accepted a write whose
// If-None-Match: * or If-Match precondition was false. deployer's state CAS
// and S3 locks would silently lose updates there, so it refuses to run.
type ErrConditionalWritesIgnored struct {
	Bucket string
	Header string // "If-None-Match" or "If-Match"
}

func (e *ErrConditionalWritesIgnored) Error() string {
	return fmt.Sprintf("s3 bucket %q: the server ignores %s on PUT, so concurrent deploys could overwrite each other's state or locks; "+
		"deployer refuses to use it: use AWS S3 or a server with conditional writes (MinIO does), or use lock: dynamodb://... with a compliant state store", e.Bucket, e.Header)
}

var probes struct {
	mu   sync.Mutex
	done map[string]bool // bucket -> probe passed in this process
	busy map[string]*sync.Mutex
}

// EnsureConditionalWrites checks once per process and bucket that the server
// enforces If-None-Match: * and If-Match on PUT, on a scratch key
// {prefix}/.deployer-probe/{uuid} that it deletes afterwards. A server that
// ignores them gives *ErrConditionalWritesIgnored. A probe that fails for
// another reason (network, credentials) is not remembered and runs again on
// the next call; a passed probe is remembered (sync.Once semantics for
// success).
func EnsureConditionalWrites(ctx context.Context, api S3API, u S3URL) error {
	probes.mu.Lock()
	if probes.done == nil {
		probes.done, probes.busy = map[string]bool{}, map[string]*sync.Mutex{}
	}
	if probes.done[u.Bucket] {
		probes.mu.Unlock()
		return nil
	}
	m := probes.busy[u.Bucket]
	if m == nil {
		m = &sync.Mutex{}
		probes.busy[u.Bucket] = m
	}
	probes.mu.Unlock()

	m.Lock()
	defer m.Unlock()
	probes.mu.Lock()
	done := probes.done[u.Bucket]
	probes.mu.Unlock()
	if done {
		return nil
	}
	if err := probe(ctx, api, u); err != nil {
		return err
	}
	probes.mu.Lock()
	probes.done[u.Bucket] = true
	probes.mu.Unlock()
	return nil
}

func probe(ctx context.Context, api S3API, u S3URL) error {
	key := u.Key(".deployer-probe/" + uuid.NewString())
	res := Resource{Service: "s3", Kind: "bucket", Name: u.Bucket, Region: u.Region}
	put := func(ifNoneMatch, ifMatch *string) error {
		_, err := api.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(u.Bucket), Key: aws.String(key),
			Body: bytes.NewReader([]byte("deployer conditional-write probe\n")), ContentType: aws.String("text/plain"),
			IfNoneMatch: ifNoneMatch, IfMatch: ifMatch,
		})
		return err
	}
	if err := put(nil, nil); err != nil {
		return fmt.Errorf("probe conditional writes: %w", Classify(err, res))
	}
	defer func() {
		_, _ = api.DeleteObject(context.WithoutCancel(ctx), &s3.DeleteObjectInput{Bucket: aws.String(u.Bucket), Key: aws.String(key)})
	}()
	checks := []struct {
		header            string
		ifNoneMatch, ifMa *string
	}{
		{"If-None-Match", aws.String("*"), nil},
		{"If-Match", nil, aws.String(`"00000000000000000000000000000000"`)},
	}
	for _, c := range checks {
		err := put(c.ifNoneMatch, c.ifMa)
		switch {
		case err == nil:
			return &ErrConditionalWritesIgnored{Bucket: u.Bucket, Header: c.header}
		case IsPreconditionFailed(err):
		default:
			return fmt.Errorf("probe conditional writes (%s): %w", c.header, Classify(err, res))
		}
	}
	return nil
}

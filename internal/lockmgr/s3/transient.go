package s3

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Transient comes from the embedded awsbackend.TransientErrors.
var _ lockmgr.TransientChecker = (*Backend)(nil)

var _ lockmgr.Remover = (*Backend)(nil)

// Remove implements lockmgr.Remover: deletes the object of key (wait-queue
// records only; a lock object keeps its tombstone and fence after release).
func (b *Backend) Remove(ctx context.Context, key string) error {
	b.forget(key)
	_, err := b.api.DeleteObject(ctx, &s3api.DeleteObjectInput{Bucket: aws.String(b.url.Bucket), Key: aws.String(b.objectKey(key))})
	if err != nil {
		return fmt.Errorf("remove %q: %w", key, awsbackend.Classify(err, b.res))
	}
	return nil
}

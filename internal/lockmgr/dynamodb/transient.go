package dynamodb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Transient comes from the embedded awsbackend.TransientErrors.
var _ lockmgr.TransientChecker = (*Backend)(nil)

var _ lockmgr.Remover = (*Backend)(nil)

// Remove implements lockmgr.Remover: deletes the item of key (wait-queue
// records only; a lock item keeps its fence after release).
func (b *Backend) Remove(ctx context.Context, key string) error {
	_, err := b.api.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: aws.String(b.table), Key: b.key(key)})
	if err != nil {
		return fmt.Errorf("remove %q: %w", key, awsbackend.Classify(err, b.res))
	}
	return nil
}

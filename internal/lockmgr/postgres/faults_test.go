package postgres_test

import (
	"context"
	"testing"

	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
)

// A statement whose reply is lost (PostgreSQL committed it, the connection
// broke before the answer arrived) is recognised as ours by reading back:
// acquire, heartbeat and release each succeed once and leave no ghost row
// (docs/locking.md, "Lost replies").
func TestLostRepliesAreOurs(t *testing.T) {
	url, proxy := faulttest.ViaTCP(t, pgschematest.Migrated(t))
	b := opener(t, url)
	defer b.Close()
	locktest.LostReplies(t, b, proxy, func(ctx context.Context) error {
		_, err := b.List(ctx, "custom:") // connect and check the schema first
		return err
	})
}

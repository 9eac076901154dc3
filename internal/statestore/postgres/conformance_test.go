package postgres_test

import (
	"testing"

	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/postgres"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

func TestConformance(t *testing.T) {
	url := pgschematest.Migrated(t) // one schema, many independent pools
	storetest.Run(t, func(t *testing.T) statestore.Backend { return open(t, url, postgres.Options{}) })
}

func BenchmarkStore(b *testing.B) {
	url := pgschematest.Migrated(b)
	storetest.Bench(b, func(b *testing.B) statestore.Backend { return open(b, url, postgres.Options{}) })
}

package dynamodb_test

import (
	"context"
	"testing"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/dynamodb"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
)

// open returns an independent client (own SDK client) of table, as a second
// process would have.
func open(tb testing.TB, table string, o awsbackend.Options) lockmgr.Backend {
	tb.Helper()
	b, err := dynamodb.Open(context.Background(), "dynamodb://"+table, o)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	_, table, o := awstest.NewTable(t)
	locktest.Run(t, func(t *testing.T) lockmgr.Backend { return open(t, table, o) })
}

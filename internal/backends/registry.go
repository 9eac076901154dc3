package backends

import (
	"github.com/deployer-dev/deployer/internal/awsbackend"
	ddblock "github.com/deployer-dev/deployer/internal/lockmgr/dynamodb"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/lockmgr/none"
	pglock "github.com/deployer-dev/deployer/internal/lockmgr/postgres"
	redislock "github.com/deployer-dev/deployer/internal/lockmgr/redis"
	s3lock "github.com/deployer-dev/deployer/internal/lockmgr/s3"
	"github.com/deployer-dev/deployer/internal/pgschema"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
	s3state "github.com/deployer-dev/deployer/internal/statestore/s3"
)

// registry is every backend deployer opens, one line per URL scheme, in the
// order errors suggest them (docs/backends.md). A new backend is its own
// package (which owns its URL parsing and its setup) plus one line here.
var registry = []Scheme{
	{Name: "file", Form: "file://DIR", Lock: asLock(inDir(filelock.New)), State: asState(inDir(filestate.New)), Init: nothingToCreate(" (made on first use)"), Local: true},
	{Name: "dynamodb", Form: "dynamodb://TABLE?region=REGION", Lock: asLock(onAWS(ddblock.Open)), Init: initOnAWS(ddblock.Init)},
	{Name: "s3", Form: "s3://BUCKET?region=REGION", Lock: asLock(checkedForWrites(onAWS(s3lock.Open))), State: asState(checkedForWrites(onAWS(s3state.Open))), Init: initOnAWS(awsbackend.InitBuckets)},
	{Name: "redis", Aliases: []string{"rediss"}, Form: "redis://HOST:6379/0", Lock: asLock(byURL(redislock.Open)), Init: nothingToCreate("")},
	{Name: "postgres", Aliases: []string{"postgresql"}, Form: "postgres://USER@HOST/DB", Lock: asLock(byURL(pglock.Open)), State: asState(openPostgresState), Init: initByURL(pgschema.Init)},
	{Name: "none", Form: "none", Lock: asLock(always(none.New)), Init: nothingToCreate(" (made on first use)"), Warning: none.Warning},
}

package backends

import (
	"context"
	"fmt"
	"strings"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	ddblock "github.com/deployer-dev/deployer/internal/lockmgr/dynamodb"
	"github.com/deployer-dev/deployer/internal/lockmgr/none"
	pglock "github.com/deployer-dev/deployer/internal/lockmgr/postgres"
	redislock "github.com/deployer-dev/deployer/internal/lockmgr/redis"
	s3lock "github.com/deployer-dev/deployer/internal/lockmgr/s3"
	"github.com/deployer-dev/deployer/internal/pgschema"
	"github.com/deployer-dev/deployer/internal/statestore"
	pgstate "github.com/deployer-dev/deployer/internal/statestore/postgres"
	s3state "github.com/deployer-dev/deployer/internal/statestore/s3"
)

// NoneWarning is printed by every command when locking is off (docs/self-hosted.md#locking-off-lock-none).
const NoneWarning = none.Warning

func (o Options) aws() awsbackend.Options {
	return awsbackend.Options{SSE: o.SSE, KMSKeyID: o.KMSKeyID, PathStyle: o.PathStyle}
}

func openLockExt(ctx context.Context, raw string, o Options) (lockmgr.Backend, error) {
	switch scheme(raw) {
	case "none":
		return none.New(), nil
	case "dynamodb":
		return ddblock.Open(ctx, raw, o.aws())
	case "s3":
		return s3lock.Open(ctx, raw, o.aws())
	case "redis", "rediss":
		return redislock.Open(ctx, raw)
	case "postgres", "postgresql":
		return pglock.Open(ctx, raw)
	}
	return nil, fmt.Errorf("lock backend %q is not supported: use file://DIR, dynamodb://TABLE, s3://BUCKET, redis://HOST:PORT/DB, postgres://... or none", raw)
}

func openStateExt(ctx context.Context, raw string, o Options) (statestore.Backend, error) {
	switch scheme(raw) {
	case "s3":
		return s3state.Open(ctx, raw, o.aws())
	case "postgres", "postgresql":
		// The coordinated update (docs/self-hosted.md#postgresql-locks-and-state): when locks live in the same
		// database, a state write commits only while the writer's lock row
		// is live.
		return pgstate.Open(ctx, raw, pgstate.Options{CheckLock: o.LockURL == raw})
	}
	return nil, fmt.Errorf("state backend %q is not supported: use file://DIR, s3://BUCKET[/prefix] or postgres://HOST/DB", raw)
}

// Init prepares the backends of the two URLs (`deployer backend init`) and
// returns one line per resource: what it created and what already existed.
// Idempotent.
func Init(ctx context.Context, stateURL, lockURL string, o Options) ([]string, error) {
	var lines []string
	awsDone, pgDone := false, map[string]bool{}
	for _, u := range []string{stateURL, lockURL} {
		switch scheme(u) {
		case "file", "none":
			lines = append(lines, fmt.Sprintf("%s: nothing to create (made on first use)", u))
		case "redis", "rediss":
			lines = append(lines, fmt.Sprintf("%s: nothing to create", Redact(u)))
		case "s3", "dynamodb":
			if awsDone {
				continue
			}
			awsDone = true
			s, l := stateURL, lockURL
			if !isAWS(s) {
				s = ""
			}
			if !isAWS(l) {
				l = ""
			}
			rep, err := awsbackend.Init(ctx, s, l, o.aws())
			if txt := strings.TrimRight(rep.String(), "\n"); txt != "" {
				lines = append(lines, txt)
			}
			if err != nil {
				return lines, err
			}
		case "postgres", "postgresql":
			if pgDone[u] {
				continue
			}
			pgDone[u] = true
			applied, err := pgschema.Migrate(ctx, u)
			if err != nil {
				return lines, err
			}
			if len(applied) == 0 {
				lines = append(lines, fmt.Sprintf("%s: schema already up to date", Redact(u)))
			}
			for _, m := range applied {
				lines = append(lines, fmt.Sprintf("%s: applied migration %s", Redact(u), m))
			}
		default:
			return lines, fmt.Errorf("backend %q is not supported", u)
		}
	}
	return lines, nil
}

func isAWS(u string) bool { s := scheme(u); return s == "s3" || s == "dynamodb" }

// Redact drops a password from a URL for messages.
func Redact(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		cred := rest[:at]
		if user, _, ok := strings.Cut(cred, ":"); ok {
			rest = user + ":***" + rest[at:]
		}
	}
	return scheme + "://" + rest
}

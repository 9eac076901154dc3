package backends

import (
	"context"
	"strings"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
	pgstate "github.com/deployer-dev/deployer/internal/statestore/postgres"
)

// The adapters below turn a backend package's constructor into the
// registry's uniform signatures, so a registry line names the package's
// own functions.

type (
	lockOpener  = func(ctx context.Context, raw string, o Options) (lockmgr.Backend, error)
	stateOpener = func(ctx context.Context, raw string, o Options) (statestore.Backend, error)
	initializer = func(ctx context.Context, urls []string, o Options) ([]string, error)
)

func (o Options) aws() awsbackend.Options {
	return awsbackend.Options{SSE: o.SSE, KMSKeyID: o.KMSKeyID, PathStyle: o.PathStyle}
}

// opener opens a backend of type B from its URL.
type opener[B any] func(ctx context.Context, raw string, o Options) (B, error)

// asLock and asState give an opener the registry's signature. On an error
// the backend returned is not used (OpenLock, OpenState).
func asLock[B lockmgr.Backend](open opener[B]) lockOpener {
	return func(ctx context.Context, raw string, o Options) (lockmgr.Backend, error) { return open(ctx, raw, o) }
}

func asState[B statestore.Backend](open opener[B]) stateOpener {
	return func(ctx context.Context, raw string, o Options) (statestore.Backend, error) { return open(ctx, raw, o) }
}

// byURL adapts Open(ctx, raw) of a backend configured by its URL alone.
func byURL[B any](open func(context.Context, string) (B, error)) opener[B] {
	return func(ctx context.Context, raw string, _ Options) (B, error) { return open(ctx, raw) }
}

// always adapts New() of a backend that needs no URL.
func always[B any](newB func() B) opener[B] {
	return func(context.Context, string, Options) (B, error) { return newB(), nil }
}

// inDir adapts New(dir) of a file:// backend: the directory is resolved
// against deployer.yaml's (FileDir).
func inDir[B any](newB func(dir string) (B, error)) opener[B] {
	return func(_ context.Context, raw string, o Options) (B, error) {
		dir, err := backendurl.FileDir(raw, o.BaseDir)
		if err != nil {
			var none B
			return none, err
		}
		return newB(dir)
	}
}

// onAWS adapts Open(ctx, raw, awsbackend.Options) of an AWS backend.
func onAWS[B any](open func(context.Context, string, awsbackend.Options) (B, error)) opener[B] {
	return func(ctx context.Context, raw string, o Options) (B, error) { return open(ctx, raw, o.aws()) }
}

// writeChecker is a backend that checks its server before the first write
// of a command (the S3 backends' conditional-write probe).
type writeChecker interface {
	CheckWrites(ctx context.Context) error
}

// checkedForWrites runs the backend's CheckWrites when it is opened for a
// command that writes (Options.Writes), so a server that cannot keep the
// backend's guarantees is refused before anything changes; a read-only
// command skips it and sends no write request.
func checkedForWrites[B writeChecker](open opener[B]) opener[B] {
	return func(ctx context.Context, raw string, o Options) (B, error) {
		b, err := open(ctx, raw, o)
		if err == nil && o.Writes {
			err = b.CheckWrites(ctx)
		}
		return b, err
	}
}

// openPostgresState opens the postgres:// state backend. When locks live in
// the same database (backend.lock equals backend.state), a state write
// commits only while the writer's lock row is live
// (docs/self-hosted.md#postgresql-locks-and-state).
func openPostgresState(ctx context.Context, raw string, o Options) (*pgstate.Backend, error) {
	return pgstate.Open(ctx, raw, pgstate.Options{CheckLock: o.LockURL == raw})
}

// nothingToCreate is the Init of a backend that needs no setup: one line
// per URL, "URL: nothing to create" and note.
func nothingToCreate(note string) initializer {
	return func(_ context.Context, urls []string, _ Options) ([]string, error) {
		lines := make([]string, 0, len(urls))
		for _, u := range urls {
			lines = append(lines, backendurl.Redact(u)+": nothing to create"+note)
		}
		return lines, nil
	}
}

// initByURL adapts Init(ctx, urls) of a backend configured by its URLs alone.
func initByURL(init func(context.Context, []string) ([]string, error)) initializer {
	return func(ctx context.Context, urls []string, _ Options) ([]string, error) { return init(ctx, urls) }
}

// initOnAWS adapts Init(ctx, urls, awsbackend.Options) of an AWS backend:
// one line per report item.
func initOnAWS(init func(context.Context, []string, awsbackend.Options) (awsbackend.Report, error)) initializer {
	return func(ctx context.Context, urls []string, o Options) ([]string, error) {
		rep, err := init(ctx, urls, o.aws())
		var lines []string
		if txt := strings.TrimRight(rep.String(), "\n"); txt != "" {
			lines = strings.Split(txt, "\n")
		}
		return lines, err
	}
}

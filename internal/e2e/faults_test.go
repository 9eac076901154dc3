//go:build unix

package e2e

// Faults between deployer and its backends (docs/locking.md, "Lost replies"):
// concurrent `backend init`, and lost replies through a proxy that lets the
// server apply a write and drops its reply.

import (
	"strings"
	"testing"
	"time"
)

// Eight `deployer backend init` at once on a fresh PostgreSQL schema, as a CI
// matrix starts them: all exit 0, exactly one applies the migration, the
// others say the schema is up to date; none reports a dirty schema.
func TestConcurrentBackendInitOnPostgres(t *testing.T) {
	r := newRemote(t, "postgres", "postgres", "", false)
	p := r.quickstart(t)
	const n = 8
	runs := make([]*bgRun, n)
	for i := range runs {
		runs[i] = p.start("backend", "init")
	}
	applied, current := 0, 0
	for i, b := range runs {
		res := b.wait(t, 5*time.Minute) // only turns a hang into a failure
		if res.code != 0 {
			t.Errorf("backend init %d: %s", i, res)
			continue
		}
		out := res.stdout + res.stderr
		switch {
		case strings.Contains(out, "applied migration 000001_init"):
			applied++
		case strings.Contains(out, "schema already up to date"):
			current++
		default:
			t.Errorf("backend init %d says neither applied nor up to date: %s", i, res)
		}
	}
	if applied != 1 || current != n-1 {
		t.Errorf("%d applied the migration and %d found the schema up to date; want 1 and %d", applied, current, n-1)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
}

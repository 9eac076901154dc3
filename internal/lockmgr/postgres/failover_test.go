package postgres_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/locktest"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// A PostgreSQL restart (pg_ctl restart -m fast: "terminating connection due
// to administrator command", then "the database system is starting up" and
// refused connections) in the middle of a lock storm is waited out: every
// Acquire with lock timeout left succeeds, no section overlaps, no update is
// lost (docs/locking.md#backend-failures-while-waiting).
func TestStormRidesOutRestart(t *testing.T) {
	base := testenv.Require(t, testenv.PostgresRestartURL, "the restartable PostgreSQL")
	restart := testenv.Require(t, testenv.PostgresRestartCmd, "the restartable PostgreSQL")
	url := pgschematest.MigratedAt(t, base)
	res := locktest.Storm(t, func(t *testing.T) lockmgr.Backend { return opener(t, url) }, locktest.StormConfig{
		Workers: 8, Cycles: locktest.StormCycles(30), Section: 5 * time.Millisecond,
		Disrupt: func(t *testing.T) {
			if out, err := exec.Command("sh", "-c", restart).CombinedOutput(); err != nil {
				t.Errorf("restart PostgreSQL: %v\n%s", err, out)
			}
		},
	})
	if res.Retried == 0 {
		t.Errorf("no worker noticed the restart: the test did not test it")
	}
}

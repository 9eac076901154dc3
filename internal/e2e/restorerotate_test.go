//go:build unix

package e2e

import (
	"strings"
	"testing"
)

// What docs/secrets.md#rotation says of a snapshot from before a rotation:
// restore refuses it with either passphrase; rotating back, restoring and
// rotating forward works.
func TestRestoreOfASnapshotFromBeforeARotation(t *testing.T) {
	p := newProject(t, `stack: shop
environments:
  dev: {}
services:
  app:
    components:
      db:
        kind: Command
        config: {password: {secret: true, value: hunter2}}
        command: {create: "echo '{}' > $DEPLOYER_OUTPUTS", delete: "true"}
`)
	pass := func(cur, next string) {
		p.env = []string{"DEPLOYER_SECRETS_PASSPHRASE=" + cur}
		if next != "" {
			p.env = append(p.env, "DEPLOYER_SECRETS_NEW_PASSPHRASE="+next)
		}
	}
	pass("old-passphrase", "")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	pass("old-passphrase", "new-passphrase")
	p.mustRun(0, "secrets", "rotate", "-e", "dev")
	for _, cur := range []string{"old-passphrase", "new-passphrase"} {
		pass(cur, "")
		if r := p.mustRun(1, "restore", "-e", "dev", "--serial", "1", "--yes"); !strings.Contains(r.stderr, "the passphrase does not open the data key") {
			t.Fatalf("restore across a rotation with %s:\n%s", cur, r)
		}
	}
	pass("new-passphrase", "old-passphrase")
	p.mustRun(0, "secrets", "rotate", "-e", "dev")
	pass("old-passphrase", "")
	p.mustRun(0, "restore", "-e", "dev", "--serial", "1", "--yes")
	pass("old-passphrase", "new-passphrase")
	p.mustRun(0, "secrets", "rotate", "-e", "dev")
	pass("new-passphrase", "")
	if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "No changes") {
		t.Fatalf("plan after the restore:\n%s", r)
	}
	if r := p.mustRun(0, "history", "-e", "dev"); !strings.Contains(r.stdout, "restore (from 1)") {
		t.Fatalf("history:\n%s", r)
	}
}

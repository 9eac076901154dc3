package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Under GitHub Actions, restore and unlock write their job summary
// sections and step outputs through the Reporter the use cases are given,
// which the wiring registers once (docs/design.md#reporting): no command
// reports by itself.
func TestRestoreAndUnlockWriteTheJobSummary(t *testing.T) {
	p := newProject(t, `stack: shop
environments: {dev: {}}
services:
  app:
    components:
      api: {kind: Command, config: {v: 1}, command: {create: "true", delete: "true"}}
`)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(string(p.read("deployer.yaml")), "v: 1", "v: 2", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	holder := p.start("lock", "exec", "--key", "nightly", "--", "sh", "-c", "touch started; while [ ! -e release ]; do sleep 0.05; done")
	eventually(t, 30*time.Second, "lock exec to hold its lock", func() bool {
		_, err := os.Stat(filepath.Join(p.dir, "started"))
		return err == nil
	})
	var locks struct {
		Locks []struct {
			LockID string `json:"lockId"`
		} `json:"locks"`
	}
	l := p.mustRun(0, "state", "locks", "--json")
	if err := json.Unmarshal([]byte(l.stdout), &locks); err != nil || len(locks.Locks) != 1 {
		t.Fatalf("state locks: %v\n%s", err, l)
	}
	id := locks.Locks[0].LockID

	summary, outputs := filepath.Join(p.dir, "summary.md"), filepath.Join(p.dir, "outputs")
	p.env = append(p.env, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+summary, "GITHUB_OUTPUT="+outputs)
	p.mustRun(0, "restore", "-e", "dev", "--serial", "1", "--yes")
	p.mustRun(0, "unlock", "--key", "nightly", "--force", "--lock-id", id, "--yes")
	p.write("release", "")
	holder.wait(t, 60*time.Second) // its lease is gone: how it ends is lock exec's

	s := string(p.read("summary.md"))
	for _, want := range []string{
		"### deployer restore: shop/dev\n\nRestored the snapshot of serial 1 as serial 3 (1 resources), deployment `",
		"### deployer unlock: custom:nightly\n\nBroke lock `custom:nightly` (lock id `" + id + "`, held by ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the job summary has no %q:\n%s", want, s)
		}
	}
	if o := string(p.read("outputs")); !strings.Contains(o, "serial=3\n") || !strings.Contains(o, "deployment-id=") {
		t.Errorf("restore's step outputs: want serial=3 and its deployment-id:\n%s", o)
	}
}

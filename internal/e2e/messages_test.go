//go:build unix

package e2e

// The messages a user meets first when something is wrong: each says what
// happened and what to do, pointing to the right place.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
)

func TestUnknownFlagOfASubcommandPointsToItsHelp(t *testing.T) {
	p := newShop(t)
	for _, c := range []struct {
		args []string
		help string
	}{
		{[]string{"state", "push", "--bogus"}, "Run 'deployer state push --help' for usage."},
		{[]string{"plan", "-e"}, "Run 'deployer plan --help' for usage."},
		{[]string{"state", "bogus"}, "Run 'deployer state --help' for usage."},
		{[]string{"bogus"}, "Run 'deployer --help' for usage."},
	} {
		r := p.mustRun(2, c.args...)
		if !strings.HasSuffix(r.stderr, c.help+"\n") {
			t.Errorf("deployer %s: stderr should end with %q:\n%s", strings.Join(c.args, " "), c.help, r)
		}
	}
	if r := p.mustRun(0, "--version"); r.stdout != p.mustRun(0, "version").stdout {
		t.Errorf("--version and version should print the same line: %q, %q", r.stdout, p.mustRun(0, "version").stdout)
	}
}

func TestCorruptStateSaysHowToRestore(t *testing.T) {
	p := newShop(t)
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(shopYAML, "replicas: 2", "replicas: 3", 1))
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	path := ".deployer/stacks/shop/dev/state.json"
	p.write(path, strings.Replace(string(p.read(path)), `"size": "small"`, `"size": "large"`, 1))

	r := p.mustRun(4, "plan", "-e", "dev")
	for _, want := range []string{"failed verification", "Nothing was written",
		"`deployer history -s shop -e dev`", "`deployer restore -s shop -e dev --serial N`"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("a corrupt state's error lacks %q:\n%s", want, r)
		}
	}
	// The fix works as said: history lists the intact snapshots, restore
	// writes one as the next serial, and the plan is clean again.
	p.mustRun(4, "history", "-e", "dev")
	p.mustRun(0, "restore", "-e", "dev", "--serial", "2", "--yes")
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
}

func TestLockTimeoutSaysHowLongItWaitedAndWhoHolds(t *testing.T) {
	p := newShop(t)
	p.write("hold", "")
	holder := p.start("lock", "exec", "--key", "nightly", "--", "sh", "-c", "while [ -f hold ]; do sleep 0.05; done")
	eventually(t, 20*time.Second, "lock exec to hold custom:nightly", func() bool { return len(p.locks()) == 1 })

	r := p.mustRun(3, "lock", "exec", "--key", "nightly", "--lock-timeout", "1s", "--", "true")
	for _, want := range []string{"lock custom:nightly is still held after waiting 1s (--lock-timeout)", "Held by:", "Operation:      exec",
		"Wait longer with a larger --lock-timeout.", "deployer unlock --key nightly --force --lock-id " + p.locks()[0].LockID} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the lock-timeout error lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "Wait for it with --lock-timeout DUR") {
		t.Errorf("after a wait the error should not ask to wait with --lock-timeout:\n%s", r)
	}
	if err := os.Remove(filepath.Join(p.dir, "hold")); err != nil {
		t.Fatal(err)
	}
	if res := holder.wait(t, 20*time.Second); res.code != 0 {
		t.Fatalf("the holder: %s", res)
	}
}

func TestMissingDynamoDBTableLeadsWithCauseAndFix(t *testing.T) {
	r := newRemote(t, "dynamodb", "file", "", false) // no table: backend init was not run
	p := r.quickstart(t)
	res := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	// Under CI=true a warning about file:// state comes first: the error's
	// own first line is what leads with the cause.
	_, errText, _ := strings.Cut("\n"+res.stderr, "\nError: ")
	first, rest, _ := strings.Cut("Error: "+errText, "\n")
	want := "Error: dynamodb table \"" + r.table + "\" in " + awstest.Region()
	if !strings.HasPrefix(first, want) || !strings.Contains(first, "run `deployer backend init` to create it") {
		t.Errorf("the first line should name the missing table and `deployer backend init`:\n%s", res)
	}
	if !strings.Contains(rest, "(read the lock backend's clock") {
		t.Errorf("the context should follow in parentheses:\n%s", res)
	}
}

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/termui"
)

// project writes deployer.yaml with yaml in a temp dir and returns its path.
func project(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "deployer.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Small mistakes get a usage error (exit 2) that says what to do.
func TestUsageMistakes(t *testing.T) {
	cfg := shopProject(t)
	tests := []struct {
		name string
		argv []string
		want []string
	}{
		{"misspelt subcommand", []string{"state", "lcoks"}, []string{`unknown command "lcoks"`, `did you mean "locks"?`}},
		{"misspelt lock subcommand", []string{"lock", "exce"}, []string{`did you mean "exec"?`}},
		{"destroy without --yes", []string{"--config", cfg, "destroy", "-e", "dev"}, []string{"destroy needs confirmation", "--yes"}},
		{"lock exec without a command", []string{"lock", "exec", "--key", "nightly"}, []string{"no command to run", "-- COMMAND"}},
		{"negative history limit", []string{"--config", cfg, "history", "-e", "dev", "--limit", "-1"}, []string{"--limit -1", "0 (all entries)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRoot(t, "", false, tt.argv...)
			var usage *exitcode.UsageError
			if !errors.As(err, &usage) {
				t.Fatalf("deployer %s = %v, want a usage error", strings.Join(tt.argv, " "), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// An unknown --service or --component is a usage error naming the closest
// name, as -e does.
func TestUnknownScopeSuggests(t *testing.T) {
	cfg := shopProject(t)
	for argv, want := range map[string]string{
		"--service ap":         `service "ap" is not in deployer.yaml (did you mean "app"?)`,
		"--component app/apu":  `component app/apu is not in deployer.yaml (did you mean "app/api"?)`,
		"--service zzzzzzzzzz": `(known: app)`,
	} {
		_, _, err := runRoot(t, "", false, append([]string{"--config", cfg, "plan", "-e", "dev"}, strings.Fields(argv)...)...)
		var target *deploy.TargetError
		if !errors.As(err, &target) || !strings.Contains(err.Error(), want) {
			t.Errorf("plan %s = %v, want a *deploy.TargetError saying %s", argv, err, want)
		}
	}
}

// Under --json a held lock's error carries the holder and the unlock command.
func TestHeldErrorJSON(t *testing.T) {
	rec := lockmgr.Record{LockKey: lockmgr.ServiceKey("shop", "dev", "app"), LockID: "L-1", LockedBy: "ci@runner",
		Metadata: lockmgr.Metadata{PID: 4242, Hostname: "runner", Operation: "deploy"}}
	// The Manager's verdict (its clock, the configured stale_after) is the one shown.
	st := lockmgr.Status{Record: rec, Verdict: lockmgr.Stale, Level: lockmgr.LevelService, Age: 90 * time.Second, HeartbeatAge: 61 * time.Second}
	got := termui.ErrorJSON(&lockmgr.HeldError{Record: rec, Status: &st}, 3)
	if got["exit_code"] != 3 || got["unlock_command"] != "deployer unlock -s shop -e dev --service app --force --lock-id L-1" {
		t.Errorf("termui.ErrorJSON = %v, want exit_code 3 and the unlock command", got)
	}
	lj, ok := got["lock"].(termui.LockJSON)
	if !ok || lj.LockID != "L-1" || lj.Level != lockmgr.LevelService || lj.Status != lockmgr.Stale || lj.AgeSeconds != 90 || lj.HeartbeatAgeSeconds != 61 {
		t.Errorf("termui.ErrorJSON lock = %#v, want the holder's record with the Manager's level, status and ages", got["lock"])
	}
	if plain := termui.ErrorJSON(errors.New("boom"), 1); len(plain) != 2 {
		t.Errorf("termui.ErrorJSON of a plain error = %v, want only error and exit_code", plain)
	}
}

// With lock: none there is no lock to report acquiring or releasing.
func TestDeployWithLockingOffPrintsNoLockLines(t *testing.T) {
	cfg := project(t, "stack: shop\nbackend: {lock: none}\nenvironments: {dev: {}}\nservices:\n  app:\n    components:\n      api: {kind: Command, command: {create: \"true\"}}\n")
	_, stderr, err := runRoot(t, "", false, "--config", cfg, "deploy", "-e", "dev", "--yes")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "Acquired lock") || strings.Contains(stderr, "Released lock") {
		t.Errorf("lock: none printed lock lines:\n%s", stderr)
	}
	if !strings.Contains(stderr, "locking is off") {
		t.Errorf("lock: none did not warn that locking is off:\n%s", stderr)
	}
}

// A failed deploy's summary counts the failed components.
func TestFailedDeploySummaryCountsFailures(t *testing.T) {
	cfg := project(t, "stack: shop\nenvironments: {dev: {}}\nservices:\n  app:\n    components:\n"+
		"      ok: {kind: Command, command: {create: \"true\"}}\n"+
		"      bad: {kind: Command, depends_on: [ok], command: {create: \"exit 3\"}}\n"+
		"      after: {kind: Command, depends_on: [bad], command: {create: \"true\"}}\n")
	stdout, _, err := runRoot(t, "", false, "--config", cfg, "deploy", "-e", "dev", "--yes")
	if err == nil {
		t.Fatal("deploy with a failing component succeeded")
	}
	if !strings.Contains(stdout, "failed in") || !strings.Contains(stdout, "1 created, 0 updated, 0 deleted, 1 failed, 1 not started.") {
		t.Errorf("summary does not count the failure:\n%s", stdout)
	}
}

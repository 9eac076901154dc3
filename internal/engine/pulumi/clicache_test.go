package pulumi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// loggingPulumi is a fake CLI that appends its arguments to a log on every
// run, prints v3.263.0 for `version` and the content of the file plugins
// for `plugin ls --json`. It returns the CLI's path, a function counting
// the runs of a command, and the plugins file.
func loggingPulumi(t *testing.T) (cli string, runs func(cmd string) int, plugins string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "runs.log")
	plugins = filepath.Join(t.TempDir(), "plugins.json")
	if err := os.WriteFile(plugins, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := fakePulumi(t, `echo "$*" >> `+log+`
case "$1" in
version) echo v3.263.0 ;;
plugin) cat `+plugins+` ;;
esac`)
	return filepath.Join(dir, "pulumi"), func(cmd string) int {
		data, _ := os.ReadFile(log)
		n := 0
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, cmd) {
				n++
			}
		}
		return n
	}, plugins
}

// A deploy asks the CLI its version once per binary: the next run takes
// it from deployer's cache, until the binary changes.
func TestFindCLIAsksTheVersionOncePerBinary(t *testing.T) {
	cli, runs, _ := loggingPulumi(t)
	for range 3 {
		if _, v, err := FindCLI(""); err != nil || v != "v3.263.0" {
			t.Fatalf("FindCLI = %q, %v", v, err)
		}
	}
	if n := runs("version"); n != 1 {
		t.Errorf("three FindCLI of one binary ran `pulumi version` %d times, want 1", n)
	}
	// An upgrade in place: a new binary at the same path.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(cli, later, later); err != nil {
		t.Fatal(err)
	}
	if _, _, err := FindCLI(""); err != nil {
		t.Fatal(err)
	}
	if n := runs("version"); n != 2 {
		t.Errorf("FindCLI after the binary changed ran `pulumi version` %d times in all, want 2", n)
	}
}

// Preflight lists the installed plugins once, and again only when the
// plugin directory changed: a plugin installed after a "not installed"
// error is found at the next run.
func TestPreflightListsPluginsOnlyWhenTheyMayHaveChanged(t *testing.T) {
	_, runs, plugins := loggingPulumi(t)
	home := t.TempDir()
	t.Setenv("PULUMI_HOME", home)
	t.Setenv("PULUMI_CONFIG_PASSPHRASE", "x")
	if err := os.MkdirAll(filepath.Join(home, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	comps := []plan.Step{{Address: "base/pet", Kind: "PulumiResource", Config: map[string]any{"type": "zzrandom:index/randomPet:RandomPet"}}}
	preflight := func() error {
		return New(Options{BackendURL: "file://" + t.TempDir()}).Preflight(context.Background(), engine.PreflightRequest{Components: comps})
	}
	var missing *PluginMissingError
	if err := preflight(); !errors.As(err, &missing) {
		t.Fatalf("Preflight without the plugin = %v, want *PluginMissingError", err)
	}
	// `pulumi plugin install resource zzrandom`: a directory appears.
	if err := os.Mkdir(filepath.Join(home, "plugins", "resource-zzrandom-v4.16.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plugins, []byte(`[{"name":"zzrandom","kind":"resource","version":"4.16.0"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := preflight(); err != nil {
			t.Fatalf("Preflight after the install: %v", err)
		}
	}
	if n := runs("plugin ls"); n != 2 {
		t.Errorf("`pulumi plugin ls` ran %d times, want 2 (before and after the install)", n)
	}
}

// Around an operation the engine answers what the Automation API asks and
// deployer already knows (outputs and history, read from the export
// instead; select of a stack known to exist) without running the CLI;
// everything else runs, and outside an operation everything runs.
func TestOperationsRunOnlyTheQuestionsDeployerCannotAnswer(t *testing.T) {
	cli, runs, _ := loggingPulumi(t)
	c, err := newCLICommand(cli, "v3.263.0")
	if err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, args ...string) string {
		out, _, _, err := c.Run(ctx, t.TempDir(), nil, nil, nil, nil, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}
	op := withAnswers(context.Background(), answers{stackExists: true})
	if out := run(op, "stack", "output", "--json", "--show-secrets", "--stack", "dev"); out != "{}" {
		t.Errorf("stack output = %q, want {}", out)
	}
	run(op, "stack", "history", "--json", "--show-secrets", "--page-size", "1", "--page", "1", "--stack", "dev")
	run(op, "stack", "select", "--stack", "dev")
	run(op, "stack", "export", "--show-secrets", "--stack", "dev")
	run(withAnswers(context.Background(), answers{}), "stack", "select", "--stack", "dev")
	run(context.Background(), "stack", "output", "--json", "--stack", "dev")
	for cmd, want := range map[string]int{"--non-interactive stack output": 1, "--non-interactive stack history": 0, "--non-interactive stack select": 1, "--non-interactive stack export": 1} {
		if n := runs(cmd); n != want {
			t.Errorf("%q ran %d times, want %d", cmd, n, want)
		}
	}
}

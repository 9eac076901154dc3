package pulumi

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// fakePulumi writes an executable "pulumi" script into a new directory put
// first on PATH and returns the directory.
func fakePulumi(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pulumi"), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // deployer's cache of what the CLI said
	return dir
}

func TestFindCLIMissingNamesTheFix(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := FindCLI("")
	var missing *CLIMissingError
	if !errors.As(err, &missing) {
		t.Fatalf("FindCLI without pulumi = %v, want *CLIMissingError", err)
	}
	for _, want := range []string{
		"the Pulumi CLI is required for kinds ElastiCacheRedis, MicroService, PulumiResource, RDS",
		"https://www.pulumi.com/docs/install/", "--install-pulumi", "pulumi.command in deployer.yaml",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	_, _, err = FindCLI("/nonexistent/bin/pulumi")
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "/nonexistent/bin/pulumi") {
		t.Errorf("FindCLI with a missing pulumi.command = %v, want it named", err)
	}
}

func TestFindCLIOnPathChecksVersion(t *testing.T) {
	dir := fakePulumi(t, `[ "$1" = version ] && echo v3.263.0`)
	path, version, err := FindCLI("")
	if err != nil {
		t.Fatalf("FindCLI: %v", err)
	}
	if path != filepath.Join(dir, "pulumi") || version != "v3.263.0" {
		t.Errorf("FindCLI = %q %q, want the fake on PATH and v3.263.0", path, version)
	}
	if _, v, err := FindCLI(filepath.Join(dir, "pulumi")); err != nil || v != "v3.263.0" {
		t.Errorf("FindCLI(pulumi.command) = %q, %v", v, err)
	}
}

func TestFindCLITooOld(t *testing.T) {
	fakePulumi(t, `echo v3.50.0`)
	_, _, err := FindCLI("")
	var missing *CLIMissingError
	if !errors.As(err, &missing) || missing.Version != "v3.50.0" || !strings.Contains(err.Error(), "older than v3.100.0") {
		t.Fatalf("FindCLI with an old CLI = %v, want it refused naming v3.50.0 and the minimum", err)
	}
}

func TestFindCLIBrokenSaysWhy(t *testing.T) {
	dir := fakePulumi(t, `echo "error: cannot load ~/.pulumi/credentials.json" >&2; exit 1`)
	_, _, err := FindCLI("")
	var missing *CLIMissingError
	if !errors.As(err, &missing) || !missing.Broken {
		t.Fatalf("FindCLI with a failing CLI = %v, want *CLIMissingError marked broken", err)
	}
	for _, want := range []string{filepath.Join(dir, "pulumi") + " does not work", "exit status 1", "cannot load ~/.pulumi/credentials.json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "was not found") {
		t.Errorf("message %q says not found for a CLI that is there", err)
	}
}

// waitFile polls for path until the deadline.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}

func TestCancelSendsOneInterruptThenKillStops(t *testing.T) {
	dir := t.TempDir()
	started, interrupted := filepath.Join(dir, "started"), filepath.Join(dir, "interrupted")
	// Like pulumi: the first SIGINT starts a graceful cancel that does not end.
	fake := fakePulumi(t, `trap 'echo >> `+interrupted+`' INT
touch `+started+`
while :; do sleep 0.05; done`)
	c, err := newCLICommand(filepath.Join(fake, "pulumi"), "v3.263.0")
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{cmd: c}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, _, err := c.Run(ctx, dir, nil, nil, nil, nil, "up")
		done <- err
	}()
	waitFile(t, started)
	cancel()
	waitFile(t, interrupted)
	select {
	case err := <-done:
		t.Fatalf("pulumi stopped before Kill (err %v): cancel must be graceful", err)
	default:
	}
	e.Kill()
	select {
	case err := <-done:
		if err == nil || !errors.Is(err, context.Canceled) {
			t.Errorf("Run after kill = %v, want an error wrapping context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Kill did not stop pulumi")
	}
	if b, _ := os.ReadFile(interrupted); strings.Count(string(b), "\n") != 1 {
		t.Errorf("pulumi got %d SIGINTs, want exactly 1 (a second one means stop now)", strings.Count(string(b), "\n"))
	}
}

func TestBackendFor(t *testing.T) {
	cases := map[string]string{
		"file:///srv/x/.deployer":             "file:///srv/x/.deployer/stacks/s/e/pulumi",
		"file:///srv/x/.deployer/":            "file:///srv/x/.deployer/stacks/s/e/pulumi",
		"s3://bucket/prefix?region=eu-west-1": "s3://bucket/prefix/stacks/s/e/pulumi?region=eu-west-1",
	}
	for base, want := range cases {
		if got := BackendFor(base, "s", "e"); got != want {
			t.Errorf("BackendFor(%q) = %q, want %q", base, got, want)
		}
	}
}

// Without the CLI, Preflight names the kinds of the components in scope,
// not every kind the engine knows.
func TestPreflightWithoutCLINamesTheScopesKinds(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	e := New(Options{BackendURL: "file://" + t.TempDir()})
	err := e.Preflight(context.Background(), engine.PreflightRequest{Components: []plan.Step{{Kind: "RDS"}, {Kind: "Command"}, {Kind: "RDS"}}})
	var missing *CLIMissingError
	if !errors.As(err, &missing) {
		t.Fatalf("Preflight without pulumi = %v, want *CLIMissingError", err)
	}
	if !strings.Contains(err.Error(), "required for kinds RDS: install it") {
		t.Errorf("message %q should name RDS alone", err)
	}
}

// notifyWriter closes started at its first write.
type notifyWriter struct {
	started chan struct{}
	once    sync.Once
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.started) })
	return len(p), nil
}

// TestKillSparesTheCommandsThatReadState: the second Ctrl-C kills the
// running pulumi operation and refuses new ones, but a command reading or
// repairing Pulumi's state after the stop (export) runs to its end: it is
// what tells deployer which resources exist.
func TestKillSparesTheCommandsThatReadState(t *testing.T) {
	dir := fakePulumi(t, "echo started\ncat >/dev/null\necho finished")
	c, err := newCLICommand(filepath.Join(dir, "pulumi"), "v3.259.0")
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		stdout string
		err    error
	}
	run := func(ctx context.Context) (chan outcome, func()) {
		stdin, feed := io.Pipe()
		w := &notifyWriter{started: make(chan struct{})}
		done := make(chan outcome, 1)
		go func() {
			out, _, _, err := c.Run(ctx, t.TempDir(), stdin, []io.Writer{w}, nil, nil, "stack", "export")
			done <- outcome{out, err}
		}()
		<-w.started
		return done, func() { _ = feed.Close() }
	}

	cleanupCtx, cancel := context.WithTimeout(forCleanup(context.Background()), time.Minute)
	defer cancel()
	exportDone, endExport := run(cleanupCtx)
	upDone, endUp := run(context.Background())
	c.kill()
	endExport()
	endUp()
	if up := <-upDone; up.err == nil || strings.Contains(up.stdout, "finished") {
		t.Errorf("the operation ran on after kill: %q, %v", up.stdout, up.err)
	}
	if exp := <-exportDone; exp.err != nil || !strings.Contains(exp.stdout, "finished") {
		t.Errorf("the export was stopped by kill: %q, %v", exp.stdout, exp.err)
	}
	if _, _, _, err := c.Run(context.Background(), t.TempDir(), nil, nil, nil, nil, "up"); !errors.Is(err, errKilled) {
		t.Errorf("an operation started after kill: %v, want errKilled", err)
	}
}

// A pulumi.command that prints without end (`yes`, not the Pulumi CLI) is
// stopped after 16 MiB, with its process group, and named.
func TestFindCLIBoundsWhatTheCommandPrints(t *testing.T) {
	fakePulumi(t, `exec yes`)
	_, _, err := FindCLI("")
	var missing *CLIMissingError
	if !errors.As(err, &missing) || missing.Err == nil || !strings.Contains(missing.Err.Error(), "printed more than 16 MiB: check that pulumi.command names the Pulumi CLI") {
		t.Fatalf("FindCLI with an endless CLI = %v, want the limit named", err)
	}
}

package cli

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGuardFlags(t *testing.T) {
	io, _, _ := Test("")
	f := NewFactory(io)
	var got *GuardStopOptions
	var gotStatus *GuardStatusOptions
	cmd := NewCmdGuard(f,
		func(_ context.Context, _ *Factory, o *GuardStopOptions) error { got = o; return nil },
		func(_ context.Context, _ *Factory, o *GuardStatusOptions) error { gotStatus = o; return nil })
	if err := parse(t, cmd, "stop", "orders-db", "--as", "app-a", "--dry-run", "--detailed-exitcode"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(GuardStopOptions{Name: "orders-db", As: "app-a", DryRun: true, DetailedExitCode: true}, *got); diff != "" {
		t.Errorf("stop (-want +got):\n%s", diff)
	}
	if err := parse(t, cmd, "status", "orders-db"); err != nil || gotStatus.Name != "orders-db" {
		t.Fatalf("status: %v %+v", err, gotStatus)
	}
	for argv, want := range map[string]string{
		"stop orders-db":           "--as APP is required",
		"stop Orders --as a":       `shared resource "Orders"`,
		"stop db --as ../x":        `application "../x"`,
		"stop":                     "accepts 1 arg",
		"status db extra":          "accepts 1 arg",
		"stop db --as a --no-such": "unknown flag",
	} {
		cmd := NewCmdGuard(f, func(context.Context, *Factory, *GuardStopOptions) error { t.Fatal("run called"); return nil }, nil)
		err := parse(t, cmd, strings.Fields(argv)...)
		var usage *UsageError
		if err == nil || !strings.Contains(err.Error(), want) || (strings.Contains(want, "\"") && !errors.As(err, &usage)) {
			t.Errorf("%s: %v, want %q", argv, err, want)
		}
	}
}

func TestGuardStopOutput(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer up.Close()
	dir := t.TempDir()
	yaml := `stack: shop
shared:
  db:
    stop: echo stopped >> stops.log
    sharers:
      a: {status_url: "http://127.0.0.1:1/a"}
      b: {status_url: "` + up.URL + `"}
  cache:
    stop: echo stopped >> stops.log
    sharers:
      a: {status_url: "http://127.0.0.1:1/a"}
`
	if err := os.WriteFile(filepath.Join(dir, "deployer.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := func(opts GuardStopOptions) (string, string, error) {
		io, out, errOut := Test("")
		f := NewFactory(io)
		f.ConfigPath = filepath.Join(dir, "deployer.yaml")
		f.Now = func() time.Time { return at }
		f.Getenv = func(string) string { return "" }
		defer f.Close()
		err := runGuardStop(context.Background(), f, &opts)
		return out.String(), errOut.String(), err
	}

	out, _, err := run(GuardStopOptions{Name: "db", As: "a", DetailedExitCode: true})
	var ec *ExitCodeError
	if !errors.As(err, &ec) || ec.Code != 2 {
		t.Fatalf("want exit 2: %v", err)
	}
	want := "db: skipped_shared_active (not stopped: still used by b)\n" +
		"  APP  STATUS  HTTP  CHECKED               URL\n" +
		"  b    UP      200   2026-01-02T03:04:05Z  " + up.URL + "\n" +
		"lock custom:guard-db (fence 1) released\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}

	out, _, err = run(GuardStopOptions{Name: "cache", As: "a"})
	if err != nil {
		t.Fatal(err)
	}
	want = "cache: dedicated_stopped (no sharer other than a, stopped without a lock)\n" +
		"stop command \"echo stopped >> stops.log\" exited 0 after 0.0s\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}

	_, _, err = run(GuardStopOptions{Name: "dbx", As: "a"})
	var usage *UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), `"dbx" is not a shared resource in `) || !strings.Contains(err.Error(), "(known: cache, db)") {
		t.Fatalf("unknown resource: %v", err)
	}
}

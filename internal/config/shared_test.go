package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSharedSectionParsesWithDefaults(t *testing.T) {
	c, err := Parse([]byte(`stack: a
shared:
  orders-db:
    stop: ./scripts/stop-orders-db.sh
    lock_ttl: 90s
    max_retries: 0
    sharers:
      app-a: {status_url: http://app-a.internal/}
      app-b: {status_url: "https://app-b.internal:8443/health"}
  cache:
    stop: echo stop
    sharers: {solo: {status_url: http://127.0.0.1:1/}}
`), "deployer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*Shared{
		"orders-db": {Stop: "./scripts/stop-orders-db.sh", LockTTL: 90 * time.Second, MaxRetries: 0, StatusTimeout: 3 * time.Second,
			Sharers: map[string]*Sharer{"app-a": {StatusURL: "http://app-a.internal/"}, "app-b": {StatusURL: "https://app-b.internal:8443/health"}}},
		"cache": {Stop: "echo stop", LockTTL: 60 * time.Second, MaxRetries: 3, StatusTimeout: 3 * time.Second,
			Sharers: map[string]*Sharer{"solo": {StatusURL: "http://127.0.0.1:1/"}}},
	}
	if diff := cmp.Diff(want, c.Shared); diff != "" {
		t.Fatalf("shared (-want +got):\n%s", diff)
	}
	if d, err := Parse([]byte("stack: a\n"), "deployer.yaml"); err != nil || d.Shared == nil {
		t.Fatalf("no shared: section: %v", err)
	}
}

func TestSharedSectionErrorsNameLinePathAndFix(t *testing.T) {
	_, err := Parse([]byte(`stack: a
shared:
  Orders:
    stop: x
    sharers: {a: {status_url: http://a/}}
  db:
    stp: ./stop.sh
    max_retries: many
    status_timeout: 3
    sharers:
      app-a: {status_url: ftp://x/}
      app-b: {status_url: http://b/, port: 80}
      app-c: {}
  empty:
    stop: ""
`), "deployer.yaml")
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{
		`deployer.yaml:3: shared.Orders: invalid shared resource name "Orders"`,
		`deployer.yaml:6: shared.db.stop: stop is required (the shell command that stops db, run in the directory of deployer.yaml)`,
		`deployer.yaml:7: shared.db.stp: unknown key (did you mean "stop"?)`,
		`deployer.yaml:8: shared.db.max_retries: max_retries must be a whole number from 0 to 20, found "many"`,
		`deployer.yaml:9: shared.db.status_timeout: invalid duration "3" (use a number with a unit`,
		`deployer.yaml:11: shared.db.sharers.app-a.status_url: status_url "ftp://x/" is not an http:// or https:// URL with a host`,
		`deployer.yaml:12: shared.db.sharers.app-b.port: unknown key (allowed: status_url)`,
		`deployer.yaml:13: shared.db.sharers.app-c.status_url: status_url is required`,
		`deployer.yaml:14: shared.empty.sharers: no sharers (list the applications that use empty, each with its status_url)`,
		`deployer.yaml:15: shared.empty.stop: stop is empty`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

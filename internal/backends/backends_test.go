package backends

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
)

func TestUnknownSchemesSayWhatIsSupported(t *testing.T) {
	ctx := context.Background()
	if _, err := OpenLock(ctx, "etcd://x", Options{}); err == nil || !strings.Contains(err.Error(), "dynamodb://TABLE") {
		t.Errorf("OpenLock(etcd://): %v", err)
	}
	if _, err := OpenState(ctx, "redis://x", Options{}); err == nil || !strings.Contains(err.Error(), "s3://BUCKET") {
		t.Errorf("OpenState(redis://): %v", err)
	}
	if _, err := OpenLock(ctx, "none", Options{}); err != nil {
		t.Errorf("OpenLock(none): %v", err)
	}
	if _, err := OpenLock(ctx, "none://x", Options{}); err == nil {
		t.Errorf("OpenLock(none://x) opened a backend: none is a word, not a scheme")
	}
}

func TestEveryRegistryLineIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range registry {
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			if seen[n] {
				t.Errorf("scheme %q is on two registry lines", n)
			}
			seen[n] = true
		}
		if s.Lock == nil && s.State == nil {
			t.Errorf("%s: opens neither a lock nor a state backend", s.Name)
		}
		if s.Init == nil {
			t.Errorf("%s: no Init (`deployer backend init`)", s.Name)
		}
		if s.Form != "none" && !strings.HasPrefix(s.Form, s.Name+"://") {
			t.Errorf("%s: form %q does not start with %s://", s.Name, s.Form, s.Name)
		}
	}
}

// config validation uses the registry's list (config.WithBackends): every
// line's form is suggested, state lines for state and lock lines for locks.
func TestConfigChecksTheRegistrySchemes(t *testing.T) {
	s := Schemes()
	for _, c := range []struct{ yaml, want string }{
		{"backend:\n  lock: etcd://host:2379\n", `deployer.yaml:2: backend.lock: unknown lock backend scheme "etcd" (` + s.Lock.Suggestion() + ")"},
		{"backend:\n  state: dynamodb://t\n", `deployer.yaml:2: backend.state: unknown state backend scheme "dynamodb" (` + s.State.Suggestion() + ")"},
	} {
		_, err := config.Parse([]byte(c.yaml), "deployer.yaml", config.WithBackends(s))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: err = %v\nwant %s", c.yaml, err, c.want)
		}
	}
	for _, sc := range registry {
		if got := strings.Contains(s.Lock.Suggestion(), sc.Form); got != (sc.Lock != nil) {
			t.Errorf("%s: in the lock suggestion %v, opens a lock backend %v", sc.Name, got, sc.Lock != nil)
		}
		if got := strings.Contains(s.State.Suggestion(), sc.Form); got != (sc.State != nil) {
			t.Errorf("%s: in the state suggestion %v, opens a state backend %v", sc.Name, got, sc.State != nil)
		}
	}
	if _, err := config.Parse([]byte("backend:\n  lock: none://x\n"), "deployer.yaml", config.WithBackends(s)); err == nil {
		t.Errorf("lock: none://x was accepted")
	}
	for _, ok := range []string{"backend:\n  lock: none\n", "backend:\n  lock: rediss://h:6380\n  state: postgresql://u@h/db\n"} {
		if _, err := config.Parse([]byte(ok), "deployer.yaml", config.WithBackends(s)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestInitOfBackendsWithoutSetup(t *testing.T) {
	lines, err := Init(context.Background(), "file://.deployer", "file://.deployer", Options{BaseDir: t.TempDir()})
	if want := []string{"file://.deployer: nothing to create (made on first use)"}; err != nil || !slices.Equal(lines, want) {
		t.Errorf("Init(file, file) = %q, %v; want %q", lines, err, want)
	}
	lines, err = Init(context.Background(), "file://st", "redis://:hunter2@127.0.0.1:6379/0", Options{})
	if want := []string{"file://st: nothing to create (made on first use)", "redis://:xxxxx@127.0.0.1:6379/0: nothing to create"}; err != nil || !slices.Equal(lines, want) {
		t.Errorf("Init(file, redis) = %q, %v; want %q", lines, err, want)
	}
	if _, err := Init(context.Background(), "file://st", "etcd://h", Options{}); err == nil || !strings.Contains(err.Error(), `"etcd://h" is not supported`) {
		t.Errorf("Init(etcd://): %v", err)
	}
}

func TestLockWarningOnlyWhenLockingIsOff(t *testing.T) {
	if LockWarning("none") == "" || LockWarning("file://.deployer") != "" || LockWarning("etcd://x") != "" {
		t.Errorf("LockWarning: none %q, file %q", LockWarning("none"), LockWarning("file://.deployer"))
	}
}

func TestIsLocal(t *testing.T) {
	for raw, want := range map[string]bool{
		"file://.deployer": true, "file:///srv/state": true,
		"s3://b?region=eu-west-1": false, "postgres://u@db/x": false, "none": false, "gopher://x": false,
	} {
		if got := IsLocal(raw); got != want {
			t.Errorf("IsLocal(%q) = %v, want %v", raw, got, want)
		}
	}
}

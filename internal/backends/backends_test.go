package backends

import (
	"context"
	"strings"
	"testing"
)

func TestFileDirResolvesAgainstTheConfigDirectory(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"file://.deployer", "/proj/.deployer"},
		{"file://state/../.deployer", "/proj/.deployer"},
		{"file:///var/lib/deployer", "/var/lib/deployer"},
	} {
		got, err := FileDir(c.raw, "/proj")
		if err != nil || got != c.want {
			t.Errorf("FileDir(%q) = %q, %v; want %q", c.raw, got, err, c.want)
		}
	}
	if _, err := FileDir("file://", "/proj"); err == nil || !strings.Contains(err.Error(), "file://DIR") {
		t.Errorf("empty file:// URL: %v", err)
	}
}

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
}

func TestRedactURLHidesPasswords(t *testing.T) {
	if got := Redact("postgres://deployer:hunter2@db:5432/x"); strings.Contains(got, "hunter2") || !strings.Contains(got, "deployer:***@db") {
		t.Errorf("Redact = %q", got)
	}
	if got := Redact("redis://127.0.0.1:6379/0"); got != "redis://127.0.0.1:6379/0" {
		t.Errorf("Redact without credentials = %q", got)
	}
}

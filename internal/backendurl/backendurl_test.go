package backendurl

import (
	"strings"
	"testing"
)

func TestRedactHidesOnlyThePassword(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"postgres://deployer:hunter2@db:5432/x?sslmode=disable", "postgres://deployer:xxxxx@db:5432/x?sslmode=disable"},
		{"redis://:hunter2@127.0.0.1:6379/0", "redis://:xxxxx@127.0.0.1:6379/0"},
		{"postgres://deployer@db/x", "postgres://deployer@db/x"},
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"file://my state dir", "file://my state dir"},
		{"none", "none"},
		{"postgres://deployer@db/x?sslmode=require&password=hunter2", "postgres://deployer@db/x?sslmode=require&password=xxxxx"},
		{"postgres://db/x?PassWord=hunter2&sslpassword=k3y&application_name=deployer", "postgres://db/x?PassWord=xxxxx&sslpassword=xxxxx&application_name=deployer"},
		{"postgres://u:hunter2@db:port/x", "postgres://(unparsable URL)"},
		{"u:hunter2@db:port", "(unparsable URL)"},
	} {
		if got := Redact(c.raw); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}

func TestScheme(t *testing.T) {
	for raw, want := range map[string]string{"s3://b/p": "s3", "none": "none", ".deployer": "", "postgresql://h/db": "postgresql"} {
		if got := Scheme(raw); got != want {
			t.Errorf("Scheme(%q) = %q, want %q", raw, got, want)
		}
	}
}

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

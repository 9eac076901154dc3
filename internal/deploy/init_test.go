package deploy_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
)

func TestWriteStarterConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deployer.yaml")
	if err := deploy.WriteStarterConfig(path, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, config.Init()) {
		t.Fatalf("wrote %q, want config.Init()", got)
	}
	if _, err := config.Load(path); err != nil {
		t.Fatalf("the starter file does not load: %v", err)
	}

	if err := os.WriteFile(path, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := deploy.WriteStarterConfig(path, false); !errors.Is(err, deploy.ErrConfigExists) {
		t.Fatalf("existing file: %v, want ErrConfigExists", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "mine\n" {
		t.Fatalf("existing file changed without force: %q", got)
	}
	if err := deploy.WriteStarterConfig(path, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, config.Init()) {
		t.Fatalf("force wrote %q, want config.Init()", got)
	}
	if err := deploy.WriteStarterConfig(filepath.Join(path, "x"), false); err == nil || errors.Is(err, deploy.ErrConfigExists) {
		t.Fatalf("path under a file: %v, want the file system's error", err)
	}
}

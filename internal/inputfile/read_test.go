//go:build unix

package inputfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

func TestReadRefusesWhatIsNotARegularFileOfAllowedSize(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("stack: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 2049), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}

	data, err := inputfile.Read(small, "configuration file", 2048)
	if err != nil || string(data) != "stack: a\n" {
		t.Fatalf("small file: %q, %v", data, err)
	}
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := inputfile.Read(exact, "configuration file", 2048); err != nil {
		t.Fatalf("a file of exactly the limit: %v", err)
	}

	var tl *inputfile.TooLargeError
	_, err = inputfile.Read(big, "configuration file", 2048)
	if !errors.As(err, &tl) || tl.Size != 2049 || !strings.Contains(err.Error(), "over the limit of 2 KiB") {
		t.Fatalf("big file: %v", err)
	}
	var nr *inputfile.NotRegularError
	for _, p := range []string{"/dev/zero", fifo, dir} {
		_, err = inputfile.Read(p, "configuration file", 2048)
		if !errors.As(err, &nr) || !inputfile.IsLimit(err) {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if !strings.Contains(err.Error(), "a directory") {
		t.Fatalf("directory message: %v", err)
	}
	if _, err := inputfile.Read(filepath.Join(dir, "missing"), "configuration file", 2048); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{512: "512 B", 4 << 20: "4 MiB", 100 << 20: "100 MiB", 1536: "1.5 KiB", 3 << 30: "3 GiB"} {
		if got := inputfile.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

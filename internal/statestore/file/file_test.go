package file_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/file"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

func open(tb testing.TB, dir string) statestore.Backend {
	tb.Helper()
	b, err := file.New(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	dir := t.TempDir() // every client shares it, as processes sharing .deployer do
	storetest.Run(t, func(t *testing.T) statestore.Backend { return open(t, dir) })
}

func BenchmarkLoadVerifySave10k(b *testing.B) {
	dir := b.TempDir()
	storetest.Bench(b, func(b *testing.B) statestore.Backend { return open(b, dir) })
}

// saved writes the seed state and returns its store and the path of state.json.
func saved(t *testing.T) (*statestore.Store, string, string) {
	t.Helper()
	b := open(t, t.TempDir())
	s := statestore.New(b)
	stack := storetest.UniqueStack(t)
	if _, err := s.Save(context.Background(), storetest.SeedState(stack, "production"), statestore.Head{}, nil); err != nil {
		t.Fatal(err)
	}
	return s, stack, b.Location(stack, "production")
}

func TestOneByteChangeFailsVerification(t *testing.T) {
	s, stack, path := saved(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), `"gp3"`) + 3 // the 'p' of "gp3", inside resources
	data[i] = 'q'
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Load(context.Background(), stack, "production")
	var ce *statestore.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("Load after a one-byte change: %v, want *statestore.ChecksumError", err)
	}
	if ce.Location != path || ce.Field != "resources" || !strings.HasPrefix(ce.Stored, "sha256:") ||
		!strings.HasPrefix(ce.Computed, "sha256:") || ce.Stored == ce.Computed {
		t.Fatalf("ChecksumError %+v: want %s, field resources and two different digests", ce, path)
	}
	for _, part := range []string{path, ce.Stored, ce.Computed} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %s", err, part)
		}
	}
}

func TestTruncatedStateFailsVerification(t *testing.T) {
	s, stack, path := saved(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Load(context.Background(), stack, "production")
	var ce *statestore.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("Load of a truncated state: %v, want *statestore.ChecksumError", err)
	}
	if ce.Location != path || ce.Field != "document" || !strings.HasPrefix(ce.Computed, "sha256:") ||
		!strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("ChecksumError %+v (%q): want the path, field document, the digest read and the word truncated", ce, err)
	}
}

func TestRefusesNamesOutsideDir(t *testing.T) {
	b := open(t, t.TempDir())
	for _, name := range []string{"..", "a/b", "", "Prod", "x:y"} {
		if _, _, err := b.Read(context.Background(), name, "production"); err == nil || errors.Is(err, statestore.ErrNotFound) {
			t.Errorf("Read of stack %q: %v, want a name error", name, err)
		}
		if _, err := b.Write(context.Background(), statestore.WriteRequest{Stack: "ok", Env: name, Serial: 1, Document: []byte("{}")}); err == nil {
			t.Errorf("Write of environment %q succeeded", name)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(b.(*file.Backend).Dir(), "stacks")); len(entries) != 0 {
		t.Errorf("refused names created %d directories", len(entries))
	}
}

//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// Performance target: `deployer --help` and `state locks` on the file backend, < 50 ms
// per process run (start-up included).
func BenchmarkCLIHelp(b *testing.B) {
	for b.Loop() {
		if err := exec.Command(bin, "--help").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCLIStateLocks(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(dir+"/deployer.yaml", []byte(shopYAML), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cmd := exec.Command(bin, "state", "locks")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A 2 GiB file where the file backend keeps the stack's lock record is
// never read (docs/locking.md, "Record size"): deploy, state locks and
// unlock stop within memory with the key and the command that removes it,
// the lock counting as held; once it is removed, deploy works.
func TestOversizedLockRecordIsRefusedWithinMemory(t *testing.T) {
	p := newProject(t, "stack: qs\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\nservices: {s: {components: {c: {kind: Command, command: {create: \"true\"}}}}}\n")
	locks := filepath.Join(p.dir, ".deployer", "locks")
	if err := os.MkdirAll(locks, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(locks, "stack%3Aqs%3Aenv%3Adev.json")
	if err := os.WriteFile(rec, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(rec, 2<<30); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"deploy", "-e", "dev", "--yes"},
		{"state", "locks", "-e", "dev"},
		{"unlock", "-e", "dev", "--force", "--yes"},
	} {
		r, rss := p.limited(args...)
		t.Logf("%s: exit %d, peak RSS %d KB\n%s", args[0], r.code, rss, r.stderr)
		for _, want := range []string{"lock stack:qs:env:dev: " + rec + " holds 2 GiB, over the limit of 64 KiB for a lock record", "counts as held", "(rm '" + rec + "')"} {
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("%s: want exit 1 and %q:\n%s", strings.Join(args, " "), want, r)
			}
		}
		if rss > 100<<10 {
			t.Errorf("%s: peak RSS %d KB, want under 100 MB", args[0], rss)
		}
	}
	if fi, err := os.Stat(rec); err != nil || fi.Size() != 2<<30 {
		t.Fatalf("the record was touched: %v, %v", fi, err)
	}
	if err := os.Remove(rec); err != nil {
		t.Fatal(err)
	}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
}

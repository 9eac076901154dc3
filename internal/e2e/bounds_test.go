//go:build unix

package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ${file:} reads only regular files of at most 1 MiB: /dev/zero, a FIFO
// and /dev/stdin are refused at once, within memory, before any lock.
func TestFileReferencesAreBoundedUnderUlimit(t *testing.T) {
	p := newProject(t, "")
	fifo := filepath.Join(p.dir, "fifo.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(p.dir, "big.pem")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 2<<20); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ref, want string }{
		{"/dev/zero", "/dev/zero is a device, not a file referenced by ${file:}"},
		{"/dev/stdin", "not a file referenced by ${file:}"},
		{"fifo.pem", "is a named pipe (FIFO)"},
		{"big.pem", "is 2 MiB, over the limit of 1 MiB"},
	} {
		p.write("deployer.yaml", `stack: qs
backend: {state: file://.deployer, lock: file://.deployer}
environments: {dev: {}}
services:
  s:
    components:
      c:
        kind: Command
        config: {cert: "${file:`+c.ref+`}"}
        command: {create: "true"}
`)
		r, rss := p.limited("deploy", "-e", "dev", "--yes")
		t.Logf("${file:%s}: exit %d, peak RSS %d KB", c.ref, r.code, rss)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "services.s.components.c.config.cert") {
			t.Errorf("${file:%s}: want exit 1 and %q:\n%s", c.ref, c.want, r)
		}
		if rss > 100<<10 {
			t.Errorf("${file:%s}: peak RSS %d KB, want under 100 MB", c.ref, rss)
		}
		if _, err := os.Stat(filepath.Join(p.dir, ".deployer")); err == nil {
			t.Errorf("${file:%s}: a refused reference touched .deployer", c.ref)
		}
	}
}

// state push of a document nested ten million levels deep is refused with
// an error, not a stack overflow.
func TestDeeplyNestedStateIsRefused(t *testing.T) {
	p := newProject(t, "stack: qs\nbackend: {state: file://.deployer, lock: file://.deployer}\nenvironments: {dev: {}}\n")
	for _, shape := range [][2]string{{"[", "]"}, {`{"a":`, "}"}} {
		const n = 10_000_000
		// Written in pieces: a document built in memory here would raise this
		// process's resident size, which every child it forks starts from, and
		// spoil the peak RSS that hostile_test.go measures (getrusage).
		writeDeep(t, filepath.Join(p.dir, "deep.json"), `{"resources": {"s/c": {"outputs": {"x": `, shape[0], "1", shape[1], `}}}}`, n)
		r, rss := p.limited("state", "push", "deep.json", "-e", "dev", "--yes")
		t.Logf("%s x %d: exit %d, peak RSS %d KB", shape[0], n, r.code, rss)
		if r.code == 0 || r.code == 2 || strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "stack overflow") {
			t.Fatalf("a deeply nested state should be refused with an error:\n%.2000s", r.stderr)
		}
		if !strings.Contains(r.stderr, "nest") && !strings.Contains(r.stderr, "depth") {
			t.Errorf("the error should say the nesting is too deep:\n%.2000s", r.stderr)
		}
	}
}

// A state whose secrets block asks for a larger scrypt cost (N=2^24, 16 GiB)
// is refused before any lock and within memory.
func TestEditedKDFIsRefusedBeforeTheLock(t *testing.T) {
	p := newProject(t, secretYAML)
	p.write("db.sh", secretScript)
	p.env = []string{"APP_PASSWORD=" + appPassword, "DEPLOYER_SECRETS_PASSPHRASE=" + passphrase, "PULUMI_CONFIG_PASSPHRASE="}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	path := filepath.Join(p.dir, ".deployer/stacks/qs/dev/state.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "scrypt:N=32768,r=8,p=1", "scrypt:N=16777216,r=8,p=1", 1)
	if edited == string(data) {
		t.Fatal("no kdf in the state")
	}
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(p.dir, "audit.log")
	r, rss := p.limited("deploy", "-e", "dev", "--yes", "--audit-log", audit)
	t.Logf("N=2^24: exit %d, peak RSS %d KB", r.code, rss)
	if r.code != 1 || !strings.Contains(r.stderr, `kdf "scrypt:N=16777216,r=8,p=1"`) {
		t.Fatalf("an edited kdf should be refused:\n%s", r)
	}
	if rss > 1<<20 { // the cost asked for is 16 GiB
		t.Errorf("peak RSS %d KB, want under 1 GB", rss)
	}
	if a, _ := os.ReadFile(audit); strings.Contains(string(a), "lock.acquired") {
		t.Errorf("the lock was taken:\n%s", a)
	}
}

// writeDeep writes head, open n times, mid, close n times and tail to path,
// a piece at a time.
func writeDeep(t *testing.T, path, head, open, mid, close, tail string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.WriteString(head)
	for range n {
		w.WriteString(open)
	}
	w.WriteString(mid)
	for range n {
		w.WriteString(close)
	}
	w.WriteString(tail)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A valid 4 MiB deployer.yaml of two million tiny values is refused before
// it is parsed, at once and within memory; the largest file the bound on
// values accepts plans within 2 s of CPU and 300 MB.
func TestTwoMillionValuesAreRefusedAtOnce(t *testing.T) {
	p := newProject(t, slowYAML())
	r, rss := p.limited("plan", "-e", "dev")
	t.Logf("4 MiB of tiny values: exit %d, peak RSS %d KB", r.code, rss)
	if r.code != 1 || !strings.Contains(r.stderr, "over the limit of 250000") || !strings.Contains(r.stderr, "DEPLOYER_MAX_CONFIG_VALUES") {
		t.Fatalf("want a clear refusal:\n%.2000s", r.stderr)
	}
	if rss > 100<<10 {
		t.Errorf("peak RSS %d KB, want under 100 MB", rss)
	}
	largest := tinyValuesYAML(2*250_000 - 24)
	p.write("deployer.yaml", largest)
	r, rss = p.limited("plan", "-e", "dev")
	t.Logf("the largest accepted file (%d bytes): exit %d, peak RSS %d KB", len(largest), r.code, rss)
	if r.code != 0 {
		t.Fatalf("the largest accepted file should plan:\n%.2000s", r.stderr)
	}
	if rss > 300<<10 {
		t.Errorf("peak RSS %d KB, want under 300 MB", rss)
	}
}

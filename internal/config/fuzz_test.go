package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary deployer.yaml bytes, seeded with the
// examples. Parse never panics; a rejection is a *ValidationError (or a YAML
// error) naming the file; an accepted config resolves for each of its
// environments, or says why not, without panicking either.
// Run longer with: go test -run '^$' -fuzz FuzzParse ./internal/config/
func FuzzParse(f *testing.F) {
	for _, ex := range []string{"quickstart", "user-platform", "pulumi-local/base", "pulumi-local/app"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", ex, "deployer.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("stack: a\nenvironments: {dev: {}}\nservices: {s: {components: {c: {kind: Command, depends_on: [s/c]}}}}\n"))
	f.Add([]byte("stack: ../x\n"))
	f.Add([]byte("stack: [unclosed\n"))
	f.Add([]byte("&a [*a]"))
	f.Add(aliasBomb(9)) // "billion laughs": refused at the alias line
	f.Add([]byte("stack: x\nservices:\n  s: &a\n    components: {c: {kind: Command, config: {x: *a}}}\n"))
	f.Add([]byte(""))
	// ${file:} of what is not a small regular file: refused before a read,
	// never an endless or unbounded one.
	for _, path := range []string{"/dev/zero", "/dev/stdin", "/dev/urandom", "/", "/proc/self/fd/0"} {
		f.Add([]byte("stack: a\nenvironments: {dev: {config: {c: '${file:" + path + "}'}}}\n" +
			"services: {s: {components: {c: {kind: Command, config: {k: '${secret:file:" + path + "}'}}}}}\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "deployer.yaml")
		if err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) && len(ve.Problems) == 0 {
				t.Fatal("a ValidationError without problems")
			}
			if !strings.Contains(err.Error(), "deployer.yaml") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		for env := range c.Environments {
			if res, err := c.Resolve(env); err == nil {
				_ = ResolveReferences(c, res, func(string) string { return "" })
			}
		}
	})
}

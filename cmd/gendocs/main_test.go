package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// docs/commands.md's reference is the command tree's: a flag, command or
// help text changed without regenerating it fails here.
func TestCommandsDocIsCurrent(t *testing.T) {
	const path = "../../docs/commands.md"
	current, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(current)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(current)); diff != "" {
		t.Errorf("docs/commands.md is stale: run `make docs` (or `go generate ./cmd/gendocs`) and commit the result.\n(-generated +file):\n%s", diff)
	}
}

// The reference has a section for every command a user can run, with
// every one of its flags.
func TestReferenceCoversEveryCommandAndFlag(t *testing.T) {
	var b strings.Builder
	r := root()
	if err := reference(&b, r); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	for _, c := range available(r) {
		if !strings.Contains(doc, "\n### "+c.CommandPath()+"\n") {
			t.Errorf("no section for %q", c.CommandPath())
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && !strings.Contains(doc, "--"+f.Name) {
				t.Errorf("%s: flag --%s is missing", c.CommandPath(), f.Name)
			}
		})
	}
	for _, want := range []string{"deployer state push", "--lock-timeout duration", "show at most N entries (0: all) (default 20)"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the reference lacks %q", want)
		}
	}
}

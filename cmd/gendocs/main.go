// Command gendocs writes the command reference of docs/commands.md from the
// deployer command tree with cobra's doc package: everything below the
// marker line is generated, the prose above it is kept as written. Run it
// with `make docs` or `go generate ./cmd/gendocs` after changing a command,
// a flag or a help text; TestCommandsDocIsCurrent fails while the file is
// stale.
//
//go:generate go run . ../../docs/commands.md
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/cli"
	"github.com/deployer-dev/deployer/internal/termui"
)

// marker separates the hand-written prose of docs/commands.md from the
// generated reference below it.
const marker = "<!-- Generated below by `make docs` (go generate ./cmd/gendocs) from the command tree in internal/cli: edit the commands' help there, not this text. -->"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendocs docs/commands.md")
		os.Exit(2)
	}
	if err := update(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

// update rewrites the generated part of the file at path.
func update(path string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := render(old)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(doc, old) {
		return nil
	}
	return os.WriteFile(path, doc, 0o644)
}

// render returns current with everything after the marker line replaced by
// the reference generated from the command tree.
func render(current []byte) ([]byte, error) {
	prose, _, found := bytes.Cut(current, []byte(marker))
	if !found {
		return nil, fmt.Errorf("no marker line %q: put it where the generated reference starts", marker)
	}
	var b bytes.Buffer
	b.Write(prose)
	b.WriteString(marker + "\n")
	if err := reference(&b, root()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// root is the command tree as the binary runs it, with the completion
// command cobra adds, and without anything that depends on the machine
// (the version line of --version).
func root() *cobra.Command {
	ios, _, _ := termui.Test("")
	r := cli.NewRootCmd(app.NewFactory(ios))
	r.Version = "VERSION"
	r.InitDefaultCompletionCmd()
	r.DisableAutoGenTag = true
	return r
}

// reference writes an index of every command and then one section each,
// cobra's markdown with its headings one level down, its links turned into
// anchors of this file, and the global flags shown once (on deployer).
func reference(w io.Writer, r *cobra.Command) error {
	cmds := available(r)
	fmt.Fprintln(w, "\n## Command reference")
	fmt.Fprintln(w, "\n| command | what it does |\n|---|---|")
	for _, c := range cmds {
		fmt.Fprintf(w, "| [`%s`](#%s) | %s |\n", c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	link := func(name string) string { // deployer_state_show.md -> #deployer-state-show
		return "#" + strings.ReplaceAll(strings.TrimSuffix(name, ".md"), "_", "-")
	}
	for _, c := range cmds {
		var sec bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &sec, link); err != nil {
			return fmt.Errorf("%s: %w", c.CommandPath(), err)
		}
		fmt.Fprint(w, "\n"+demote(drop(sec.String(), "### Options inherited from parent commands", "### SEE ALSO")))
	}
	return nil
}

// available lists r and its documented subcommands, depth first in the
// tree's order (cobra sorts them by name).
func available(r *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{r}
	if r.Name() == "completion" {
		return out // one per shell: its help lists them
	}
	for _, c := range r.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			out = append(out, available(c)...)
		}
	}
	return out
}

// drop removes the sections of cobra's markdown with these headings: the
// global flags (listed once, at the top of the reference) and the links to
// parent and children (the index has them).
func drop(s string, headings ...string) string {
	var out []string
	skipping := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "#") {
			skipping = slices.Contains(headings, l)
		}
		if !skipping {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func anchor(path string) string { return strings.ReplaceAll(path, " ", "-") }

// demote moves markdown headings outside code blocks one level down.
func demote(s string) string {
	lines := strings.Split(s, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(l, "#") {
			lines[i] = "#" + l
		}
	}
	return strings.Join(lines, "\n")
}

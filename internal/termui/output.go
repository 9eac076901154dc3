package termui

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// OutputsView says how `deployer output` prints a stack's outputs.
type OutputsView struct {
	Name    string // one output, or "" for all
	JSON    bool   // --json
	Raw     bool   // --raw: one value for a shell
	Actions bool   // under GitHub Actions
	Target  deploy.Target
}

// RenderOutputs prints the shown outputs (secrets already masked or
// unwrapped) on w as v says: raw, JSON, one value, or a table; with none,
// a hint on stderr.
func RenderOutputs(ios *IOStreams, w io.Writer, shown map[string]any, v OutputsView) error {
	t := v.Target
	switch {
	case v.Raw:
		return printRawOutput(w, v.Name, shown[v.Name], rawText(ios.OutTTY(), v.Actions))
	case v.JSON && v.Name != "":
		return WriteJSON(w, shown[v.Name])
	case v.JSON:
		return WriteJSON(w, shown)
	case v.Name != "":
		_, err := fmt.Fprintln(w, sanitize.Line(outputText(shown[v.Name], true)))
		return err
	case len(shown) == 0:
		fmt.Fprintf(ios.ErrOut, "No outputs in %s/%s: name them under outputs: in deployer.yaml and deploy (docs/operations.md#stack-outputs).\n", t.Stack, t.Env)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE")
	for _, name := range slices.Sorted(maps.Keys(shown)) {
		fmt.Fprintf(tw, "%s\t%s\n", sanitize.Line(name), sanitize.Line(outputText(shown[name], false)))
	}
	return tw.Flush()
}

// rawText is how output --raw writes a value (docs/decisions.md, "output
// --raw"): as it is into a pipe or file, as Terraform's output -raw does;
// on a terminal through sanitize.Text (no escape sequence reaches it);
// under GitHub Actions through sanitize.Commands (the runner reads no
// workflow command in it, the bytes are otherwise kept for $(...)).
func rawText(tty, actions bool) func(string) string {
	switch {
	case tty:
		return sanitize.Text
	case actions:
		return sanitize.Commands
	}
	return func(s string) string { return s }
}

// printRawOutput writes v for a shell through clean (rawText): a string
// as it is, a number or boolean as written, with no newline. A masked
// secret or a map or list is an error saying what to use instead.
func printRawOutput(w io.Writer, name string, v any, clean func(string) string) error {
	if v == plan.Masked {
		return &exitcode.UsageError{Msg: fmt.Sprintf("output %s is sensitive: add --show-secrets to print it (audited)", name)}
	}
	switch v.(type) {
	case map[string]any, []any:
		return &exitcode.UsageError{Msg: fmt.Sprintf("output %s is not a string, number or boolean: use --json", name)}
	}
	_, err := io.WriteString(w, clean(outputText(v, false)))
	return err
}

// outputText renders a value: a string unquoted (quoted with quote), other
// values as compact JSON.
func outputText(v any, quote bool) string {
	if s, ok := v.(string); ok && (!quote || s == plan.Masked) {
		return s
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

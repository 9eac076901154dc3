package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

// OutputOptions are the flags and arguments of `deployer output`.
type OutputOptions struct {
	IO     *IOStreams
	Target targetFlags
	Name   string // the one output to print; "" prints them all
	JSON   bool
	Raw    bool // print Name's value alone, unquoted, with no newline
	// ShowSecrets prints secret values (audited as state.secrets_shown).
	ShowSecrets bool
	// SecretOut is stdout without the masking of secret values: where
	// --show-secrets prints.
	SecretOut io.Writer
	// Actions is true under GitHub Actions (GITHUB_ACTIONS=true): --raw
	// neutralises workflow commands (rawText).
	Actions bool
	Config  func() (*config.Config, error)
	// Outputs is the use case (stateops.Outputs on the configured state
	// backend), bound by NewCmdOutput; a run test sets a fake.
	Outputs func(context.Context, *config.Config, stateops.OutputsRequest) (*stateops.OutputsResult, error)
}

// NewCmdOutput returns `deployer output [NAME]`: the stack's outputs
// (docs/operations.md#stack-outputs); runF replaces runOutput in tests.
func NewCmdOutput(f *Factory, runF func(context.Context, *OutputOptions) error) *cobra.Command {
	opts := &OutputOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return projectConfig(f, "output") },
		Outputs: func(ctx context.Context, cfg *config.Config, req stateops.OutputsRequest) (*stateops.OutputsResult, error) {
			d, err := stateDeps(ctx, f, cfg, req.ShowSecrets)
			if err != nil {
				return nil, err
			}
			return stateops.Outputs(ctx, d, req)
		},
	}
	cmd := &cobra.Command{
		Use:   "output [NAME]",
		Short: "Print the stack's outputs (named under outputs: in deployer.yaml)",
		Long: heredoc.Doc(`
			Prints the outputs the last deploy recorded for the stack/environment, as a table (NAME,
			VALUE), or NAME's value alone. --json prints them as a JSON object (or NAME's value as JSON);
			--raw NAME prints the value with no quotes and no newline, for shells:
			  url=$(deployer output --raw api_url -e production)
			Secret outputs print as (sensitive) in the table and --json; NAME of a secret is refused (exit 2)
			without --show-secrets, which decrypts them (audited). Read-only, no lock.`),
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if opts.Raw && opts.Name == "" {
				return &UsageError{Msg: "--raw prints one output: name it, e.g. deployer output --raw api_url -e ENV"}
			}
			if opts.Raw && f.JSON {
				return &UsageError{Msg: "use either --raw or --json, not both"}
			}
			opts.JSON = f.JSON
			opts.SecretOut = f.RawOut
			opts.Actions = f.Getenv("GITHUB_ACTIONS") == "true"
			return runOr(cmd, opts, runF, withTarget(&opts.Target, opts.Config, runOutput))
		},
	}
	opts.Target.bind(cmd, false)
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "print NAME's value alone, unquoted, with no newline (for shells)")
	cmd.Flags().BoolVar(&opts.ShowSecrets, "show-secrets", false, "decrypt and print secret values (audited)")
	return cmd
}

// runOutput resolves the target, reads the outputs and prints them.
func runOutput(ctx context.Context, opts *OutputOptions, cfg *config.Config, t deploy.Target) error {
	res, err := opts.Outputs(ctx, cfg, stateops.OutputsRequest{Target: t, Name: opts.Name, ShowSecrets: opts.ShowSecrets})
	if err != nil {
		return err
	}
	w := opts.IO.Out
	if opts.ShowSecrets && opts.SecretOut != nil {
		w = opts.SecretOut
	}
	shown := make(map[string]any, len(res.Outputs))
	for name, v := range res.Outputs {
		shown[name] = shownOutput(name, v, opts.ShowSecrets)
	}
	if opts.Name != "" && shown[opts.Name] == plan.Masked {
		// One secret asked for by name: "(sensitive)" on stdout with exit 0
		// would be read by a script as the value (docs/operations.md#stack-outputs).
		return &UsageError{Msg: fmt.Sprintf("output %s is sensitive: add --show-secrets to print it (audited)", opts.Name)}
	}
	switch {
	case opts.Raw:
		return printRawOutput(w, opts.Name, shown[opts.Name], rawText(opts.IO.OutTTY(), opts.Actions))
	case opts.JSON && opts.Name != "":
		return writeJSON(w, shown[opts.Name])
	case opts.JSON:
		return writeJSON(w, shown)
	case opts.Name != "":
		_, err := fmt.Fprintln(w, sanitize.Line(outputText(shown[opts.Name], true)))
		return err
	case len(shown) == 0:
		fmt.Fprintf(opts.IO.ErrOut, "No outputs in %s/%s: name them under outputs: in deployer.yaml and deploy (docs/operations.md#stack-outputs).\n", t.Stack, t.Env)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE")
	for _, name := range slices.Sorted(maps.Keys(shown)) {
		fmt.Fprintf(tw, "%s\t%s\n", sanitize.Line(name), sanitize.Line(outputText(shown[name], false)))
	}
	return tw.Flush()
}

// shownOutput is an output's value as printed: secrets (sealed, marked, or
// under a secret name) as (sensitive), or with show their value unwrapped.
func shownOutput(name string, v any, show bool) any {
	if show {
		return plan.Unwrap(v)
	}
	if plan.IsSecretKey(name) || sensitive.IsEnvelope(v) {
		return plan.Masked
	}
	return plan.Mask(v)
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
		return &UsageError{Msg: fmt.Sprintf("output %s is sensitive: add --show-secrets to print it (audited)", name)}
	}
	switch v.(type) {
	case map[string]any, []any:
		return &UsageError{Msg: fmt.Sprintf("output %s is not a string, number or boolean: use --json", name)}
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

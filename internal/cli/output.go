package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
	"github.com/deployer-dev/deployer/internal/termui"
)

// OutputOptions are the flags and arguments of `deployer output`.
type OutputOptions struct {
	IO     *termui.IOStreams
	Target app.TargetFlags
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
func NewCmdOutput(f *app.Factory, runF func(context.Context, *OutputOptions) error) *cobra.Command {
	opts := &OutputOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return app.ProjectConfig(f, "output") },
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
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if opts.Raw && opts.Name == "" {
				return &exitcode.UsageError{Msg: "--raw prints one output: name it, e.g. deployer output --raw api_url -e ENV"}
			}
			if opts.Raw && f.JSON {
				return &exitcode.UsageError{Msg: "use either --raw or --json, not both"}
			}
			opts.JSON = f.JSON
			opts.SecretOut = f.RawOut
			opts.Actions = f.Getenv("GITHUB_ACTIONS") == "true"
			return runOr(cmd, opts, runF, app.WithTarget(&opts.Target, opts.Config, runOutput))
		},
	}
	opts.Target.Bind(cmd, false)
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
		return &exitcode.UsageError{Msg: fmt.Sprintf("output %s is sensitive: add --show-secrets to print it (audited)", opts.Name)}
	}
	return termui.RenderOutputs(opts.IO, w, shown, termui.OutputsView{Name: opts.Name, JSON: opts.JSON, Raw: opts.Raw, Actions: opts.Actions, Target: t})
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

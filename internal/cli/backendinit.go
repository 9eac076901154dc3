package cli

import (
	"context"
	"fmt"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/backends"
	"github.com/deployer-dev/deployer/internal/termui"
)

// BackendInitOptions are the inputs of `deployer backend init`.
type BackendInitOptions struct {
	IO *termui.IOStreams
	// Init is the use case: backends.Init on deployer.yaml's backend.state
	// and backend.lock (or DEPLOYER_BACKEND_STATE / DEPLOYER_BACKEND_LOCK),
	// bound by NewCmdBackendInit; a run test sets a fake. It returns one line
	// per resource, what it created and what already existed, and on an
	// error the lines before it.
	Init func(ctx context.Context) ([]string, error)
}

// NewCmdBackendInit returns `deployer backend init`: creates what the
// configured backends need (DynamoDB table, S3 bucket, PostgreSQL schema),
// idempotently (docs/backends.md). runF replaces runBackendInit in tests.
func NewCmdBackendInit(f *app.Factory, runF func(context.Context, *BackendInitOptions) error) *cobra.Command {
	opts := &BackendInitOptions{IO: f.IO}
	opts.Init = func(ctx context.Context) ([]string, error) {
		cfg, err := app.OptionalConfig(f)
		if err != nil {
			return nil, err
		}
		return backends.Init(ctx, cfg.Backend.State, cfg.Backend.Lock, app.BackendOptions(cfg, true))
	}
	return &cobra.Command{
		Use:   "init",
		Short: "Create the table, bucket or schema the configured backends need (idempotent)",
		Long: heredoc.Doc(`
			Creates what backend.state and backend.lock name: the DynamoDB table, the S3 bucket (versioning,
			encryption, public access block; then checks that the server enforces conditional writes) or the
			PostgreSQL schema. Idempotent: a second run reports what already exists.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOr(cmd, opts, runF, runBackendInit)
		},
	}
}

// runBackendInit prints what Init created and found, one line each on
// stdout, also when it stops at an error.
func runBackendInit(ctx context.Context, opts *BackendInitOptions) error {
	lines, err := opts.Init(ctx)
	for _, l := range lines {
		fmt.Fprintln(opts.IO.Out, l)
	}
	return err
}

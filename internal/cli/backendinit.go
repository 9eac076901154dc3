package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/backends"
)

// NewCmdBackendInit returns `deployer backend init`: creates what the
// configured backends need (DynamoDB table, S3 bucket, PostgreSQL schema),
// idempotently, printing what it created and what already existed.
func NewCmdBackendInit(f *Factory, runF func(context.Context, *Factory) error) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the table, bucket or schema the configured backends need (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), f)
			}
			cfg, err := optionalConfig(f)
			if err != nil {
				return err
			}
			lines, err := backends.Init(cmd.Context(), cfg.Backend.State, cfg.Backend.Lock, f.backendOptions(cfg))
			for _, l := range lines {
				fmt.Fprintln(f.IO.Out, l)
			}
			return err
		},
	}
}

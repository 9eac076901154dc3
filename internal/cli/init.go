package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/termui"
)

// InitOptions are the options of `deployer init`.
type InitOptions struct {
	IO *termui.IOStreams

	// From argv and the global flags: --config, else ./deployer.yaml.
	Path  string
	Force bool

	// Init is the use case (deploy.WriteStarterConfig; a run test sets a
	// fake).
	Init func(path string, force bool) error
}

// NewCmdInit returns `deployer init`; runF replaces runInit in tests.
func NewCmdInit(f *app.Factory, runF func(context.Context, *InitOptions) error) *cobra.Command {
	opts := &InitOptions{IO: f.IO, Init: deploy.WriteStarterConfig}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented deployer.yaml",
		Long: heredoc.Doc(`
			Writes a commented starter deployer.yaml (./deployer.yaml, or --config FILE). An existing file
			is kept unless --force.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Path = f.ConfigPath
			if opts.Path == "" {
				opts.Path = "deployer.yaml"
			}
			return runOr(cmd, opts, runF, runInit)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite an existing file")
	return cmd
}

// runInit writes the starter file and says what to run next. It uses only
// opts.
func runInit(_ context.Context, opts *InitOptions) error {
	err := opts.Init(opts.Path, opts.Force)
	if errors.Is(err, deploy.ErrConfigExists) {
		return fmt.Errorf("%s already exists: edit it, or pass --force to overwrite it", opts.Path)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Wrote %s. Next: deployer plan -e dev\n", opts.Path)
	return nil
}

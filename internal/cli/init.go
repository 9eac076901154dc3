package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
)

// InitOptions are the flags of `deployer init`.
type InitOptions struct {
	Path  string
	Force bool
}

// NewCmdInit returns `deployer init`.
func NewCmdInit(f *Factory, runF func(context.Context, *Factory, *InitOptions) error) *cobra.Command {
	opts := &InitOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented deployer.yaml",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Path = f.ConfigPath
			if opts.Path == "" {
				opts.Path = "deployer.yaml"
			}
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runInit(f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite an existing file")
	return cmd
}

func runInit(f *Factory, opts *InitOptions) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if opts.Force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	fh, err := os.OpenFile(opts.Path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s already exists: edit it, or pass --force to overwrite it", opts.Path)
	}
	if err != nil {
		return err
	}
	if _, err := fh.Write(config.Init()); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "Wrote %s. Next: deployer plan -e dev\n", opts.Path)
	return nil
}

package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/termui"
)

// VersionOptions are the options of `deployer version`.
type VersionOptions struct {
	IO   *termui.IOStreams
	JSON bool
	// Version returns what to print (BuildVersion; a run test sets a fake).
	Version func() app.VersionInfo
	// Platform is the Go version's OS/architecture, e.g. "linux/amd64".
	Platform string
}

// NewCmdVersion returns `deployer version`; runF replaces runVersion in
// tests.
func NewCmdVersion(f *app.Factory, runF func(context.Context, *VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO, Version: app.BuildVersion, Platform: app.Platform}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, runVersion)
		},
	}
}

// runVersion prints the version (human or --json). It uses only opts.
func runVersion(_ context.Context, opts *VersionOptions) error {
	v := opts.Version()
	if opts.JSON {
		return opts.IO.PrintJSON(v)
	}
	_, err := fmt.Fprintln(opts.IO.Out, v.Line(opts.Platform))
	return err
}

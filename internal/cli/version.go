package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// NewCmdVersion returns `deployer version`.
func NewCmdVersion(f *Factory, runF func(context.Context, *Factory) error) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), f)
			}
			if f.JSON {
				return writeJSON(f, map[string]string{"version": Version, "commit": Commit, "date": Date, "go": runtime.Version()})
			}
			fmt.Fprintf(f.IO.Out, "deployer %s", Version)
			if Commit != "" {
				fmt.Fprintf(f.IO.Out, " (%s, %s)", Commit, Date)
			}
			fmt.Fprintf(f.IO.Out, " %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

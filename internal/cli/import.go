package cli

import (
	"context"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/engines"
	"github.com/deployer-dev/deployer/internal/exitcode"
)

// NewCmdImport returns `deployer import ADDR ID`: the deploy of component
// ADDR alone with an import: {id: ID} block, recorded as type import
// (docs/operations.md#import); runF replaces runDeploy in tests.
func NewCmdImport(f *app.Factory, runF func(context.Context, *DeployOptions) error) *cobra.Command {
	opts := newDeployOptions(f, false)
	cmd := &cobra.Command{
		Use:   "import ADDR ID",
		Short: "Adopt an instance that exists outside deployer as component ADDR, creating nothing",
		Long: heredoc.Doc(`
			Plans component ADDR (SERVICE/NAME, declared in deployer.yaml) alone as if it had import: {id: ID},
			shows the plan (= import), asks (--yes without a terminal) and adopts the instance under ADDR's lock:
			a Command component runs its command.read with DEPLOYER_IMPORT_ID=ID and records what it prints as
			its outputs, create never runs; a Pulumi component imports the resource with Pulumi's import option.
			Recorded in the history as type import. The same as an import: block in deployer.yaml and a deploy
			(docs/operations.md#import).`),
		Example: `  deployer import data/db db-42 -e prod
  deployer import app/bucket my-bucket -e dev --yes`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			opts.Import = deploy.ImportTarget{Address: args[0], ID: args[1]}
			if args[1] == "" {
				return &exitcode.UsageError{Msg: "ID must not be empty: give the id of the existing instance to adopt"}
			}
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, runDeploy)
		},
	}
	opts.Target.Bind(cmd, false)
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "import without asking (required without a terminal)")
	app.BindLockTimeout(cmd, &opts.LockTimeout)
	cmd.Flags().BoolVar(&opts.InstallPulumi, "install-pulumi", false, "install the Pulumi CLI when it is missing")
	opts.Grace = engines.DefaultGrace
	return cmd
}

// Package cli holds deployer's commands: one file per command with an options
// struct, NewCmdX and runX (STYLE, GitHub CLI's pkg/cmd). Commands parse and
// validate flags, then call internal/deploy; output goes through IOStreams.
package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Version information, set by main from -ldflags.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// NewRootCmd returns the deployer command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "deployer",
		Short:         "Deploy infrastructure stacks safely: locks, plans, state with history",
		Long:          "deployer takes a lock on a stack, service or component, loads the stack's state, plans the\nchanges from deployer.yaml, applies them and writes the new state with an append-only history.",
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			if f.NoColor {
				f.IO.DisableColor()
			}
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&f.ConfigPath, "config", "", "path of deployer.yaml (default ./deployer.yaml)")
	pf.BoolVar(&f.JSON, "json", false, "print JSON on stdout (errors as a JSON object on stderr)")
	pf.BoolVar(&f.NoColor, "no-color", false, "disable colour (also NO_COLOR)")
	pf.BoolVarP(&f.Verbose, "verbose", "v", false, "print more detail on stderr")
	pf.StringVar(&f.AuditPath, "audit-log", "", "append audit events as JSON lines to FILE")
	root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "env" {
			name = "environment"
		}
		return pflag.NormalizedName(name)
	})
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Msg: err.Error()} })

	stateCmd := &cobra.Command{Use: "state", Short: "Inspect and manage state and locks"}
	stateCmd.AddCommand(NewCmdStateShow(f, nil), NewCmdStateLocks(f, nil), NewCmdStatePush(f, nil))
	lockCmd := &cobra.Command{Use: "lock", Short: "Run jobs under a lease"}
	lockCmd.AddCommand(NewCmdLockExec(f, nil))
	backendCmd := &cobra.Command{Use: "backend", Short: "Prepare state and lock backends"}
	backendCmd.AddCommand(NewCmdBackendInit(f, nil))

	root.AddCommand(
		NewCmdInit(f, nil),
		NewCmdPlan(f, nil),
		NewCmdDeploy(f, nil),
		NewCmdDestroy(f, nil),
		stateCmd,
		NewCmdUnlock(f, nil),
		NewCmdHistory(f, nil),
		NewCmdRestore(f, nil),
		lockCmd,
		backendCmd,
		NewCmdVersion(f, nil),
	)
	return root
}

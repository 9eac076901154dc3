// Package cli holds deployer's commands and nothing else: one file per
// command or command group with an options struct, NewCmdX and runX (as
// GitHub CLI's pkg/cmd). Commands parse and validate flags, call one use
// case of internal/deploy and hand its result to a view of internal/termui
// (the only output path, termui.IOStreams). What they are built from (the
// Factory, the Session behind it, the flags several commands share) is
// internal/app's (docs/design.md#package-map).
package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/exitcode"
)

// NewRootCmd returns the deployer command tree.
func NewRootCmd(f *app.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "deployer",
		Short: "Deploy infrastructure stacks safely: locks, plans, state with history",
		Long: heredoc.Doc(`
			deployer takes a lock on a stack, service or component, loads the stack's state, plans the
			changes from deployer.yaml, applies them and writes the new state with an append-only history.`),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			g, err := bindGlobals(cmd)
			if err != nil {
				return err
			}
			f.Globals = g
			if f.NoColor {
				f.IO.DisableColor()
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&f.ConfigPath, "config", "", "path of deployer.yaml (default ./deployer.yaml)")
	pf.BoolVar(&f.JSON, "json", false, "print JSON on stdout (errors as a JSON object on stderr)")
	pf.BoolVar(&f.NoColor, "no-color", false, "disable colour (also NO_COLOR or TERM=dumb)")
	pf.BoolVarP(&f.Verbose, "verbose", "v", false, "print more detail on stderr")
	pf.StringVar(&f.AuditPath, "audit-log", "", "append audit events as JSON lines to FILE")
	root.SetGlobalNormalizationFunc(normalizeFlag)
	// --version prints what `deployer version` prints, as terraform and gh do.
	root.Version = app.BuildVersion().Line(app.Platform)
	root.SetVersionTemplate("{{.Version}}\n")
	root.InitDefaultVersionFlag()
	root.SetOut(f.IO.Out) // --version and --help: data on stdout through termui.IOStreams
	root.Flags().Lookup("version").Usage = "print the version (as deployer version)"
	root.SetFlagErrorFunc(flagError)

	stateCmd := groupCmd("state", "Inspect and manage state and locks")
	stateCmd.AddCommand(NewCmdStateShow(f, nil), NewCmdStateLocks(f, nil), NewCmdStatePush(f, nil), NewCmdStateRm(f, nil), NewCmdStateList(f), NewCmdStateMove(f, nil))
	lockCmd := groupCmd("lock", "Run jobs under a lease")
	lockCmd.AddCommand(NewCmdLockExec(f, nil))
	backendCmd := groupCmd("backend", "Prepare state and lock backends")
	backendCmd.AddCommand(NewCmdBackendInit(f, nil))

	root.AddCommand(
		NewCmdInit(f, nil),
		NewCmdPlan(f, nil),
		NewCmdDeploy(f, nil),
		NewCmdDestroy(f, nil),
		NewCmdImport(f, nil),
		NewCmdShow(f, nil),
		NewCmdStacks(f, nil),
		stateCmd,
		NewCmdUnlock(f, nil),
		NewCmdHistory(f, nil),
		NewCmdRestore(f, nil),
		NewCmdOutput(f, nil),
		NewCmdSecrets(f),
		lockCmd,
		backendCmd,
		NewCmdVersion(f, nil),
		NewCmdGuard(f),
		NewCmdPolicy(f),
		NewCmdUI(f, nil),
	)
	suggestFor(root)
	app.RegisterCompletions(root, f)
	return root
}

// otherToolsNames are the words users of Terraform, Pulumi and kubectl type
// for deployer's commands: an unknown command that is one of them
// suggests the command ("deployer apply" -> did you mean deploy?).
var otherToolsNames = map[string][]string{
	"deploy":  {"apply", "up", "install"},
	"plan":    {"preview", "diff"},
	"destroy": {"down", "delete", "remove", "uninstall"},
	"history": {"log", "logs"},
	"restore": {"rollback"},
	"unlock":  {"force-unlock"},
}

// suggestFor sets SuggestFor of root's commands from otherToolsNames; cobra
// adds those and the commands within edit distance 2 to its unknown
// command error.
func suggestFor(root *cobra.Command) {
	for _, c := range root.Commands() {
		c.SuggestFor = otherToolsNames[c.Name()]
	}
}

// normalizeFlag makes --env an alias of --environment in every command.
func normalizeFlag(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "env" {
		name = "environment"
	}
	return pflag.NormalizedName(name)
}

// flagError makes a flag cobra cannot parse a usage error (exit 2).
func flagError(_ *cobra.Command, err error) error { return &exitcode.UsageError{Msg: err.Error()} }

// groupCmd is a command that only holds subcommands: alone it prints its
// help; with an unknown subcommand it is a usage error (exit 2) that
// suggests the closest one, like the root command's.
func groupCmd(use, short string) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			var names []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name())
				}
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := config.Suggest(args[0], names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return &exitcode.UsageError{Msg: msg + "; its commands: " + strings.Join(names, ", ")}
		},
	}
}

// bindGlobals layers the global flags over DEPLOYER_* variables with viper
// (docs/configuration.md#environment-variables-and-flags: flags > environment > deployer.yaml > defaults): --config and
// DEPLOYER_CONFIG, --audit-log and DEPLOYER_AUDIT_LOG, --json and
// DEPLOYER_JSON, --no-color and DEPLOYER_NO_COLOR, --verbose and
// DEPLOYER_VERBOSE. deployer.yaml's own keys are layered by config.ApplyEnv,
// which validates them with the file's error messages.
func bindGlobals(cmd *cobra.Command) (app.Globals, error) {
	v := viper.New()
	v.SetEnvPrefix("DEPLOYER")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	for _, name := range []string{"config", "audit-log", "json", "no-color", "verbose"} {
		if err := v.BindEnv(name); err != nil {
			return app.Globals{}, err
		}
		if fl := cmd.Flags().Lookup(name); fl != nil {
			if err := v.BindPFlag(name, fl); err != nil {
				return app.Globals{}, err
			}
		}
	}
	return app.Globals{
		ConfigPath: v.GetString("config"),
		AuditPath:  v.GetString("audit-log"),
		JSON:       v.GetBool("json"),
		NoColor:    v.GetBool("no-color"),
		Verbose:    v.GetBool("verbose"),
	}, nil
}

// runOr hands a command's options to runF when a test gave one, else to
// run: the one place every command's RunE ends (options struct per
// command, docs/design.md#package-map).
func runOr[O any](cmd *cobra.Command, opts O, runF, run func(context.Context, O) error) error {
	if runF != nil {
		return runF(cmd.Context(), opts)
	}
	return run(cmd.Context(), opts)
}

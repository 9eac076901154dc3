package cli

import (
	"context"
	"fmt"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/policy"
	"github.com/deployer-dev/deployer/internal/termui"
)

// NewCmdPolicy returns `deployer policy`, the group of policy commands
// (docs/policy.md).
func NewCmdPolicy(f *app.Factory) *cobra.Command {
	cmd := groupCmd("policy", "Test the Rego policies that plans are checked against")
	cmd.AddCommand(NewCmdPolicyTest(f, nil))
	return cmd
}

// PolicyTestOptions are the options of `deployer policy test`.
type PolicyTestOptions struct {
	IO   *termui.IOStreams
	Dirs []string
}

// NewCmdPolicyTest returns `deployer policy test DIR...`; runF replaces
// runPolicyTest in tests.
func NewCmdPolicyTest(f *app.Factory, runF func(context.Context, *PolicyTestOptions) error) *cobra.Command {
	opts := &PolicyTestOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "test DIR...",
		Short: "Run the Rego unit tests (test_ rules) of policy directories",
		Long: heredoc.Doc(`
			Loads every .rego file under each DIR (tests: *_test.rego) and runs the rules named test_... with
			OPA's test runner, with the builtins evaluation allows (no http.send, no opa.runtime, no clock):
			one line per test, then a count. Exits 1 when a test fails or errors (docs/policy.md#testing).`),
		Example: "  deployer policy test policy/\n  deployer policy test examples/policy/ policy/",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &exitcode.UsageError{Msg: "policy test needs the directory of the policies: deployer policy test DIR..."}
			}
			opts.Dirs = args
			return runOr(cmd, opts, runF, runPolicyTest)
		},
	}
}

func runPolicyTest(ctx context.Context, opts *PolicyTestOptions) error {
	sum, err := policy.TestDirs(ctx, opts.Dirs, opts.IO.Out)
	if err != nil {
		return err
	}
	if n := sum.Failed + sum.Errored; n > 0 {
		return fmt.Errorf("%d of %d policy tests did not pass", n, n+sum.Passed+sum.Skipped)
	}
	return nil
}

package cli

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/termui"
)

// parse runs cmd with argv, capturing the options given to runF.
func parse(t *testing.T, cmd *cobra.Command, argv ...string) error {
	t.Helper()
	cmd.SetGlobalNormalizationFunc(normalizeFlag) // --env, as under the root
	cmd.SetFlagErrorFunc(flagError)
	cmd.SetArgs(argv)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.ExecuteContext(context.Background())
}

func TestUsageErrorsBeforeAnyBackend(t *testing.T) {
	io, _, _ := termui.Test("")
	f := app.NewFactory(io)
	err := parse(t, NewCmdUnlock(f, func(context.Context, *UnlockOptions) error { return nil }), "-e", "dev")
	var usage *exitcode.UsageError
	if !errors.As(err, &usage) || usage.Msg == "" {
		t.Errorf("unlock without --force: want a usage error, got %v", err)
	}
	err = parse(t, NewCmdRestore(f, func(context.Context, *RestoreOptions) error { return nil }), "-e", "dev", "--serial", "2", "--timestamp", "2024-01-01T00:00:00Z")
	if !errors.As(err, &usage) {
		t.Errorf("restore with both --serial and --timestamp: want a usage error, got %v", err)
	}
}

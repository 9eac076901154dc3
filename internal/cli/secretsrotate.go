package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/termui"
)

// SecretsRotateOptions are the options of `deployer secrets rotate`.
type SecretsRotateOptions struct {
	IO *termui.IOStreams

	// From argv and the global flags.
	Target      app.TargetFlags
	NewProvider string
	LockTimeout time.Duration
	JSON        bool

	// Config loads deployer.yaml, or without one the backends named by
	// DEPLOYER_BACKEND_* (app.ProjectConfig).
	Config func() (*config.Config, error)
	// Provider returns the provider to re-encrypt with
	// (secrets.NewRotationProvider on the process's environment).
	Provider func(spec string) (secrets.Provider, error)
	// Rotate is the use case (stateops.Ops.Rotate under the stack lock,
	// bound by NewCmdSecretsRotate; a run test sets a fake).
	Rotate func(ctx context.Context, cfg *config.Config, t deploy.Target, to secrets.Provider, lockTimeout time.Duration) (statestore.Head, error)
}

// NewCmdSecrets returns `deployer secrets` and its subcommands.
func NewCmdSecrets(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "secrets", Short: "Manage the encryption of secrets in state"}
	cmd.AddCommand(NewCmdSecretsRotate(f, nil))
	return cmd
}

// NewCmdSecretsRotate returns `deployer secrets rotate`: re-encrypts the
// secrets of a stack/environment's state under a new passphrase or key, as a
// new serial, under the stack lock (docs/secrets.md). runF replaces
// runSecretsRotate in tests.
func NewCmdSecretsRotate(f *app.Factory, runF func(context.Context, *SecretsRotateOptions) error) *cobra.Command {
	opts := &SecretsRotateOptions{
		IO:     f.IO,
		Config: func() (*config.Config, error) { return app.ProjectConfig(f, "secrets rotate") },
		Provider: func(spec string) (secrets.Provider, error) {
			return secrets.NewRotationProvider(spec, f.Getenv)
		},
		Rotate: func(ctx context.Context, cfg *config.Config, t deploy.Target, to secrets.Provider, lockTimeout time.Duration) (statestore.Head, error) {
			svc, err := f.Service(ctx, cfg, app.ServiceOptions{})
			if err != nil {
				return statestore.Head{}, err
			}
			return stateops.New(svc.Core()).Rotate(ctx, stateops.RotateRequest{Target: t, To: secrets.NewSealer(to, f.Masker), LockTimeout: lockTimeout})
		},
	}
	cmd := &cobra.Command{
		Use:   "rotate",
		Short: "Re-encrypt the state's secrets with a new passphrase or key",
		Long: heredoc.Doc(`
			Re-encrypt the secrets of a stack/environment's state as a new serial, under the stack lock.

			The state is opened with pulumi.secrets_provider and DEPLOYER_SECRETS_PASSPHRASE, and written
			with --new-provider (default: the same provider) and, for passphrase, the passphrase in
			DEPLOYER_SECRETS_NEW_PASSPHRASE. Afterwards use the new passphrase (and write the new provider
			in deployer.yaml).`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.ValidateFlags(); err != nil {
				return err
			}
			opts.JSON = f.JSON
			return runOr(cmd, opts, runF, app.WithTarget(&opts.Target, opts.Config, runSecretsRotate))
		},
	}
	opts.Target.Bind(cmd, false)
	cmd.Flags().StringVar(&opts.NewProvider, "new-provider", "", "provider to re-encrypt with: passphrase or awskms://KEY_ID?region=R (default: the current one)")
	app.BindLockTimeout(cmd, &opts.LockTimeout)
	return cmd
}

// runSecretsRotate resolves the target and the new provider, calls the use
// case and says what to change next. It uses only opts.
func runSecretsRotate(ctx context.Context, opts *SecretsRotateOptions, cfg *config.Config, t deploy.Target) error {
	spec := opts.NewProvider
	if spec == "" {
		spec = cfg.Pulumi.SecretsProvider
	}
	p, err := opts.Provider(spec)
	if errors.Is(err, secrets.ErrNoNewPassphrase) {
		return &exitcode.UsageError{Msg: "secrets rotate to a passphrase reads it from " + secrets.NewPassphraseVar + ": export it (and keep the current one in DEPLOYER_SECRETS_PASSPHRASE)"}
	}
	if err != nil {
		return &exitcode.UsageError{Msg: err.Error()}
	}
	head, err := opts.Rotate(ctx, cfg, t, p, opts.LockTimeout)
	if err != nil {
		return err
	}
	if opts.JSON {
		return opts.IO.PrintJSON(map[string]any{"stack": t.Stack, "environment": t.Env, "serial": head.Serial, "provider": p.Name()})
	}
	w := opts.IO.Out
	fmt.Fprintf(w, "Re-encrypted the secrets of %s/%s with provider %s as serial %d.\n", t.Stack, t.Env, p.Name(), head.Serial)
	if p.Name() == "passphrase" {
		fmt.Fprintf(w, "From now on set DEPLOYER_SECRETS_PASSPHRASE to the new passphrase.\n")
	}
	if p.Name() != cfg.Pulumi.SecretsProvider {
		fmt.Fprintf(w, "Set pulumi.secrets_provider: %s in deployer.yaml.\n", p.Name())
	}
	return nil
}

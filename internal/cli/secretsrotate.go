package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/secrets"
)

// NewPassphraseVar holds the passphrase `secrets rotate` re-encrypts with.
const NewPassphraseVar = "DEPLOYER_SECRETS_NEW_PASSPHRASE"

// SecretsRotateOptions are the flags of `deployer secrets rotate`.
type SecretsRotateOptions struct {
	Target      targetFlags
	NewProvider string
	LockTimeout time.Duration
}

// NewCmdSecrets returns `deployer secrets` and its subcommands.
func NewCmdSecrets(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "secrets", Short: "Manage the encryption of secrets in state"}
	cmd.AddCommand(NewCmdSecretsRotate(f, nil))
	return cmd
}

// NewCmdSecretsRotate returns `deployer secrets rotate`: re-encrypts the
// secrets of a stack/environment's state under a new passphrase or key, as a
// new serial, under the stack lock (docs/secrets.md).
func NewCmdSecretsRotate(f *Factory, runF func(context.Context, *Factory, *SecretsRotateOptions) error) *cobra.Command {
	opts := &SecretsRotateOptions{}
	cmd := &cobra.Command{
		Use:   "rotate",
		Short: "Re-encrypt the state's secrets with a new passphrase or key",
		Long: `Re-encrypt the secrets of a stack/environment's state as a new serial, under the stack lock.

The state is opened with pulumi.secrets_provider and DEPLOYER_SECRETS_PASSPHRASE, and written
with --new-provider (default: the same provider) and, for passphrase, the passphrase in
DEPLOYER_SECRETS_NEW_PASSPHRASE. Afterwards use the new passphrase (and write the new provider
in deployer.yaml).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Target.validateFlags(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), f, opts)
			}
			return runSecretsRotate(cmd.Context(), f, opts)
		},
	}
	opts.Target.bind(cmd, false)
	cmd.Flags().StringVar(&opts.NewProvider, "new-provider", "", "provider to re-encrypt with: passphrase or awskms://KEY_ID?region=R (default: the current one)")
	cmd.Flags().DurationVar(&opts.LockTimeout, "lock-timeout", 0, "wait up to DUR for a held lock")
	return cmd
}

func runSecretsRotate(ctx context.Context, f *Factory, opts *SecretsRotateOptions) error {
	cfg, t, err := f.target(&opts.Target, "secrets rotate")
	if err != nil {
		return err
	}
	spec := opts.NewProvider
	if spec == "" {
		spec = cfg.Pulumi.SecretsProvider
	}
	newPass := f.Getenv(NewPassphraseVar)
	getenv := func(k string) string {
		switch k {
		case "DEPLOYER_SECRETS_PASSPHRASE":
			return newPass
		case "DEPLOYER_SECRETS_PASSPHRASE_FILE", "PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE":
			return ""
		}
		return f.Getenv(k)
	}
	p, err := secrets.NewProvider(spec, getenv)
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	if p.Name() == "passphrase" && newPass == "" {
		return &UsageError{Msg: "secrets rotate to a passphrase reads it from " + NewPassphraseVar + ": export it (and keep the current one in DEPLOYER_SECRETS_PASSPHRASE)"}
	}
	svc, err := f.Service(ctx, cfg, EngineOptions{})
	if err != nil {
		return err
	}
	head, err := svc.Rotate(ctx, t, secrets.NewSealer(p, f.Masker()), opts.LockTimeout)
	if err != nil {
		return err
	}
	if f.JSON {
		return writeJSON(f, map[string]any{"stack": t.Stack, "environment": t.Env, "serial": head.Serial, "provider": p.Name()})
	}
	fmt.Fprintf(f.IO.Out, "Re-encrypted the secrets of %s/%s with provider %s as serial %d.\n", t.Stack, t.Env, p.Name(), head.Serial)
	if p.Name() == "passphrase" {
		fmt.Fprintf(f.IO.Out, "From now on set DEPLOYER_SECRETS_PASSPHRASE to the new passphrase.\n")
	}
	if p.Name() != cfg.Pulumi.SecretsProvider {
		fmt.Fprintf(f.IO.Out, "Set pulumi.secrets_provider: %s in deployer.yaml.\n", p.Name())
	}
	return nil
}

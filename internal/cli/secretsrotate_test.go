package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/termui"
)

func TestNewCmdSecretsRotate(t *testing.T) {
	tests := []struct {
		name    string
		argv    []string
		json    bool
		want    SecretsRotateOptions
		wantErr string
	}{
		{name: "env", argv: []string{"-e", "prod"}, want: SecretsRotateOptions{Target: app.TargetFlags{Env: "prod"}}},
		{name: "all flags", json: true, argv: []string{"-s", "shop", "-e", "prod", "--new-provider", "awskms://alias/x?region=eu-west-1", "--lock-timeout", "1m"},
			want: SecretsRotateOptions{Target: app.TargetFlags{Stack: "shop", Env: "prod"}, NewProvider: "awskms://alias/x?region=eu-west-1", LockTimeout: time.Minute, JSON: true}},
		{name: "no environment", argv: []string{"--new-provider", "passphrase"}, wantErr: "--environment (-e) is required"},
		{name: "no --service", argv: []string{"-e", "prod", "--service", "app"}, wantErr: "unknown flag: --service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _ := termui.Test("")
			f := app.NewFactory(ios)
			var got *SecretsRotateOptions
			cmd := NewCmdSecretsRotate(f, func(_ context.Context, o *SecretsRotateOptions) error { got = o; return nil })
			f.JSON = tt.json // --json is the root's flag
			err := parse(t, cmd, tt.argv...)
			checkParsed(t, err, got, tt.want, tt.wantErr)
		})
	}
}

// fakeProvider is a secrets.Provider that only has a name.
type fakeProvider string

func (p fakeProvider) Name() string { return string(p) }
func (fakeProvider) NewKey(context.Context) ([]byte, statestore.SecretsInfo, error) {
	return nil, statestore.SecretsInfo{}, errors.New("fake")
}
func (fakeProvider) Key(context.Context, statestore.SecretsInfo) ([]byte, error) {
	return nil, errors.New("fake")
}

func TestRunSecretsRotate(t *testing.T) {
	const kms = "awskms://alias/x?region=eu-west-1"
	locked := errors.New("lock stack:shop:dev is held")
	tests := []struct {
		name     string
		opts     SecretsRotateOptions
		current  string // pulumi.secrets_provider; "" for the default, passphrase
		wantSpec string
		provErr  error
		rotErr   error
		wantOut  string
		wantErr  error
	}{
		{name: "new passphrase", opts: SecretsRotateOptions{Target: app.TargetFlags{Env: "dev"}}, wantSpec: "passphrase",
			wantOut: "Re-encrypted the secrets of shop/dev with provider passphrase as serial 8.\n" +
				"From now on set DEPLOYER_SECRETS_PASSPHRASE to the new passphrase.\n"},
		{name: "to kms", opts: SecretsRotateOptions{Target: app.TargetFlags{Env: "dev"}, NewProvider: kms, LockTimeout: time.Minute}, wantSpec: kms,
			wantOut: "Re-encrypted the secrets of shop/dev with provider " + kms + " as serial 8.\n" +
				"Set pulumi.secrets_provider: " + kms + " in deployer.yaml.\n"},
		{name: "new key of the same kms", opts: SecretsRotateOptions{Target: app.TargetFlags{Env: "dev"}}, current: kms, wantSpec: kms,
			wantOut: "Re-encrypted the secrets of shop/dev with provider " + kms + " as serial 8.\n"},
		{name: "json", opts: SecretsRotateOptions{Target: app.TargetFlags{Env: "dev"}, NewProvider: kms, JSON: true}, wantSpec: kms,
			wantOut: "{\n  \"environment\": \"dev\",\n  \"provider\": \"" + kms + "\",\n  \"serial\": 8,\n  \"stack\": \"shop\"\n}\n"},
		{name: "no new passphrase", opts: SecretsRotateOptions{Target: app.TargetFlags{Env: "dev"}}, wantSpec: "passphrase", provErr: secrets.ErrNoNewPassphrase,
			wantErr: &exitcode.UsageError{Msg: "secrets rotate to a passphrase reads it from DEPLOYER_SECRETS_NEW_PASSPHRASE: export it (and keep the current one in DEPLOYER_SECRETS_PASSPHRASE)"}},
		{name: "unknown provider", opts: SecretsRotateOptions{Target: app.TargetFlags{Env: "dev"}, NewProvider: "vault://x"}, wantSpec: "vault://x", provErr: errors.New("secrets provider \"vault://x\" is not supported"),
			wantErr: &exitcode.UsageError{Msg: "secrets provider \"vault://x\" is not supported"}},
		{name: "lock held", opts: SecretsRotateOptions{Target: app.TargetFlags{Env: "dev"}}, wantSpec: "passphrase", rotErr: locked, wantErr: locked},
		{name: "bad stack", opts: SecretsRotateOptions{Target: app.TargetFlags{Env: "dev", Stack: "Shop"}},
			wantErr: &exitcode.UsageError{Msg: `stack "Shop": names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := shopConfig(t)
			if tt.current != "" {
				cfg.Pulumi.SecretsProvider = tt.current
			}
			ios, out, errOut := termui.Test("")
			opts := tt.opts
			opts.IO = ios
			opts.Config = func() (*config.Config, error) { return cfg, nil }
			opts.Provider = func(spec string) (secrets.Provider, error) {
				if spec != tt.wantSpec {
					t.Errorf("provider %q, want %q", spec, tt.wantSpec)
				}
				name := spec
				if name == "" {
					name = "passphrase"
				}
				return fakeProvider(name), tt.provErr
			}
			opts.Rotate = func(_ context.Context, c *config.Config, tg deploy.Target, to secrets.Provider, lockTimeout time.Duration) (statestore.Head, error) {
				if c != cfg || tg != (deploy.Target{Stack: "shop", Env: "dev"}) || lockTimeout != tt.opts.LockTimeout {
					t.Errorf("Rotate(%v, %v, %v)", c, tg, lockTimeout)
				}
				return statestore.Head{Serial: 8}, tt.rotErr
			}
			err := app.WithTarget(&opts.Target, opts.Config, runSecretsRotate)(context.Background(), &opts)
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.wantOut, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if errOut.Len() > 0 {
				t.Errorf("stderr: %q", errOut)
			}
		})
	}
}

package core

import (
	"context"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

// LearnSecrets gives the Masker every secret text of the resolved config
// (docs/secrets.md): values under keys named like
// password/secret/token/key, values written {secret: true, value: X}, and
// references marked secret. It reports whether the state will need a data
// key: the config holds a secret, or a stack output is one by its name or
// the output key it names (docs/operations.md#stack-outputs), known before
// anything runs.
func (c *Core) LearnSecrets(res *config.Resolved) bool {
	found := false
	add := func(v any) {
		found = true
		c.Masker.Add(secrets.Strings(v)...)
	}
	sensitive.Leaves(res.EnvConfig, add)
	for _, rc := range res.Components {
		sensitive.Leaves(rc.Config, add)
	}
	for name, ref := range res.Outputs {
		found = found || sensitive.IsSecretKey(name)
		for _, k := range ref.Path {
			found = found || sensitive.IsSecretKey(k)
		}
	}
	return found
}

// LearnOutputs gives the Masker the secret values among a component's
// outputs (by key name or marked {secret: true, value: X}), and under
// GitHub Actions announces them, as soon as the engine has read them:
// before any dependent runs (docs/secrets.md#masked-everywhere).
func (c *Core) LearnOutputs(_ string, outputs map[string]any) {
	sensitive.Leaves(outputs, func(v any) { c.Masker.Add(secrets.Strings(v)...) })
}

// CheckSecrets verifies, before any lock is taken, that the secrets
// provider opens the stored state (a wrong passphrase or an unavailable KMS
// key is a *statestore.SecretsError, exit 1), and that it can make a key
// when the run has secrets to store and the state has none yet.
func (c *Core) CheckSecrets(ctx context.Context, t Target, needKey bool) error {
	return c.Store.CheckSecrets(ctx, t.Stack, t.Env, needKey)
}

package core

import (
	"context"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/secrets"
)

// LearnSecrets gives the Masker every secret text of the resolved config
// (docs/secrets.md) and reports whether there is any: values under keys
// named like password/secret/token/key, values written {secret: true, value:
// X}, and references marked secret.
func (c *Core) LearnSecrets(res *config.Resolved) bool {
	found := false
	add := func(v any) {
		found = true
		c.Masker.Add(secrets.Strings(v)...)
	}
	secrets.Leaves(res.EnvConfig, add)
	for _, c := range res.Components {
		secrets.Leaves(c.Config, add)
	}
	return found
}

// LearnOutputs gives the Masker the secret values among a component's
// outputs (by key name or marked {secret: true, value: X}), and under
// GitHub Actions announces them, as soon as the engine has read them:
// before any dependent runs (docs/secrets.md#masked-everywhere).
func (c *Core) LearnOutputs(_ string, outputs map[string]any) {
	secrets.Leaves(outputs, func(v any) { c.Masker.Add(secrets.Strings(v)...) })
}

// CheckSecrets verifies, before any lock is taken, that the secrets
// provider opens the stored state (a wrong passphrase or an unavailable KMS
// key is a *statestore.SecretsError, exit 1), and that it can make a key
// when the run has secrets to store and the state has none yet.
func (c *Core) CheckSecrets(ctx context.Context, t Target, needKey bool) error {
	return c.Store.CheckSecrets(ctx, t.Stack, t.Env, needKey)
}

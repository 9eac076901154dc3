package secrets

import (
	"errors"
	"slices"
)

// NewPassphraseVar holds the passphrase `deployer secrets rotate`
// re-encrypts with (docs/secrets.md).
const NewPassphraseVar = "DEPLOYER_SECRETS_NEW_PASSPHRASE"

// ErrNoNewPassphrase is returned by NewRotationProvider when the new
// provider is passphrase and NewPassphraseVar is empty.
var ErrNoNewPassphrase = errors.New(NewPassphraseVar + " is not set")

// NewRotationProvider returns the provider `secrets rotate` re-encrypts with:
// spec (the current provider, pulumi.secrets_provider, when empty: the
// caller passes it), whose passphrase is read from NewPassphraseVar only;
// the current passphrase variables (DEPLOYER_SECRETS_PASSPHRASE,
// PULUMI_CONFIG_PASSPHRASE and their *_FILE forms) are ignored, so the old
// passphrase is never taken for the new one. getenv reads the variables.
// Errors: NewProvider's for an unknown spec; ErrNoNewPassphrase.
func NewRotationProvider(spec string, getenv func(string) string) (Provider, error) {
	newPass := getenv(NewPassphraseVar)
	p, err := NewProvider(spec, func(k string) string {
		switch {
		case k == passphraseVars[0]:
			return newPass
		case slices.Contains(passphraseVars, k):
			return ""
		}
		return getenv(k)
	})
	if err != nil {
		return nil, err
	}
	if p.Name() == "passphrase" && newPass == "" {
		return nil, ErrNoNewPassphrase
	}
	return p, nil
}

// Package sensitive is what deployer knows about secret values without
// any key or provider (docs/secrets.md): which config keys and values are
// secrets (IsSecretKey, IsSecretValue, IsSecret), and which values of a map
// are at any depth (Leaves), the {secret: true, value: X} form
// (Wrap), what a masked value shows (Masked), and the mark of a sealed
// value (IsEnvelope). It imports nothing of deployer's, so config and plan
// use it without linking the providers of internal/secrets (AWS KMS) or
// statestore.
package sensitive

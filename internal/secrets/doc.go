// Package secrets owns everything deployer knows about secret values
// (docs/secrets.md):
//
//   - the texts a Masker hides (Strings); which keys and values are
//     secrets, in a map at any depth too, is the sensitive package's, which
//     config and plan use without the providers;
//   - the envelope a secret value is stored as in every state document, in
//     place of the value ({"deployer:secret": "v1", "provider": ...,
//     "key": ..., "ciphertext": ...}), and the per-state descriptor
//     (statestore.SecretsInfo) that names the provider, its salt or
//     encrypted data key, and a key check;
//   - the providers that make the data key: "passphrase" (scrypt from
//     golang.org/x/crypto over DEPLOYER_SECRETS_PASSPHRASE and a salt kept in
//     the state) and "awskms://KEY_ID?region=R" (a data key from AWS KMS,
//     stored encrypted by KMS in the state); values are sealed with AES-256-GCM
//     from the standard library;
//   - the Sealer, which statestore.Store calls to seal secrets before a
//     document is written and open them after it is read and verified;
//   - the Masker, which replaces known secret values by "***" in every line
//     of output (component output, errors, the audit log).
package secrets

package statestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// SecretsInfo is the state's "secrets" block: how the secret values stored
// in it were encrypted (docs/secrets.md). Every secret value in
// desired_config, actual_state and outputs is replaced in place by an
// envelope naming Provider and Key; this block holds what recovers the data
// key from the provider's credentials. It is absent from states without
// encrypted secrets (every state written before secrets were encrypted).
type SecretsInfo struct {
	// Provider is "passphrase" or "awskms://KEY_ID?region=R".
	Provider string `json:"provider"`
	// Key names the data key; every envelope of the state carries it.
	Key string `json:"key"`
	// KDF and Salt (base64) derive the key from the passphrase ("passphrase").
	KDF  string `json:"kdf,omitempty"`
	Salt string `json:"salt,omitempty"`
	// EncryptedKey is the data key encrypted by KMS, base64 ("awskms://").
	EncryptedKey string `json:"encrypted_key,omitempty"`
	// Check is a known text sealed with the key: it tells a wrong passphrase
	// or key before any secret value is touched.
	Check string `json:"check"`
}

// Sealer encrypts the secret values of a state before it is written and
// decrypts them after it is read and verified (internal/secrets implements
// it). Checksums cover the sealed form, so verifying a state needs no key.
type Sealer interface {
	// Seal returns a copy of st, sharing what it does not change, whose
	// secret values are envelopes and whose Secrets block names their key.
	// st is not changed.
	Seal(ctx context.Context, st *State) (*State, error)
	// Open replaces, in place, every envelope of st by the value it holds.
	Open(ctx context.Context, st *State) error
	// Check verifies, before any lock is taken, that the provider's
	// credentials open a state sealed as info says (nil: a state with no
	// secrets block, which needs a key only if needKey).
	Check(ctx context.Context, info *SecretsInfo, needKey bool) error
	// DigestKey returns a key derived from the data key info names, for
	// keyed digests of secret values outside the state (saved plans); the
	// data key itself never leaves the Sealer. Errors as Check.
	DigestKey(ctx context.Context, info SecretsInfo) ([]byte, error)
	// FreshKey returns the secrets block of the data key a first write of
	// a state without one seals with, made once per Sealer and wrapped by
	// the provider as every state's data key is: a saved plan made when
	// the state has no data key keys its digests with it (docs/plan.md
	// "Saved plans"). Errors as Check.
	FreshKey(ctx context.Context) (SecretsInfo, error)
}

// WithSealer makes the Store seal secret values on every write (Save,
// Encode) and open them on every read (Load, Snapshot).
func WithSealer(s Sealer) Option { return func(st *Store) { st.sealer = s } }

// Sealer returns the Store's Sealer; nil when it stores secrets as they come.
func (s *Store) Sealer() Sealer { return s.sealer }

// Encode returns the document of st as Save writes it: secret values sealed,
// checksums over the sealed form. It sets st.Checksums and st.Secrets.
// Errored states are saved through it.
func (s *Store) Encode(ctx context.Context, st *State) ([]byte, error) {
	sealed, err := s.seal(ctx, st)
	if err != nil {
		return nil, err
	}
	doc, err := Encode(sealed)
	if err != nil {
		return nil, err
	}
	st.Checksums, st.Secrets = sealed.Checksums, sealed.Secrets
	return doc, nil
}

func (s *Store) seal(ctx context.Context, st *State) (*State, error) {
	if s.sealer == nil {
		return st, nil
	}
	return s.sealer.Seal(ctx, st)
}

func (s *Store) open(ctx context.Context, st *State) error {
	if s.sealer == nil {
		return nil
	}
	return s.sealer.Open(ctx, st)
}

// DigestKey returns the Sealer's digest key for a state sealed as info says
// (Sealer.DigestKey); nil, nil without a Sealer or without info (a state
// that holds no secrets yet has no data key).
func (s *Store) DigestKey(ctx context.Context, info *SecretsInfo) ([]byte, error) {
	if s.sealer == nil || info == nil {
		return nil, nil
	}
	return s.sealer.DigestKey(ctx, *info)
}

// ErrNoSealer is returned by FreshKey of a Store without a Sealer: it has no
// secrets provider to make a key with.
var ErrNoSealer = errors.New("no secrets provider: set DEPLOYER_SECRETS_PASSPHRASE or pulumi.secrets_provider")

// FreshKey returns the Sealer's fresh key block (Sealer.FreshKey);
// ErrNoSealer without a Sealer.
func (s *Store) FreshKey(ctx context.Context) (*SecretsInfo, error) {
	if s.sealer == nil {
		return nil, ErrNoSealer
	}
	info, err := s.sealer.FreshKey(ctx)
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// CheckSecrets verifies, without a lock and without decrypting any secret
// value, that the Sealer's provider opens the state of stack/env (a wrong
// passphrase or an unavailable KMS key is an error naming the provider).
// needKey asks for a usable key even when there is no state or it holds no
// secrets yet (the run has secrets to seal). Nothing to check without a
// Sealer. A missing state is not an error.
func (s *Store) CheckSecrets(ctx context.Context, stack, env string, needKey bool) error {
	if s.sealer == nil {
		return nil
	}
	doc, err := s.ReadDoc(ctx, stack, env)
	switch {
	case err == nil:
		return s.CheckSecretsOf(ctx, &doc, needKey)
	case !isNotFound(err):
		return err
	}
	return s.CheckSecretsOf(ctx, nil, needKey)
}

// CheckSecretsOf is CheckSecrets of a document already read (ReadDoc); a
// nil doc is no state yet.
func (s *Store) CheckSecretsOf(ctx context.Context, doc *Doc, needKey bool) error {
	if s.sealer == nil {
		return nil
	}
	var info *SecretsInfo
	if doc != nil {
		info = PeekSecrets(doc.Data)
	}
	return s.sealer.Check(ctx, info, needKey)
}

// PeekSecrets reads the secrets block of a state document without verifying
// it; nil when there is none or the document does not parse.
func PeekSecrets(data []byte) *SecretsInfo {
	// Encode writes the block last, as a top-level field: read it from
	// there without scanning the whole document.
	if i := bytes.LastIndex(data, topLevelSecrets); i >= 0 {
		var info SecretsInfo
		if err := json.NewDecoder(bytes.NewReader(data[i+len(topLevelSecrets):])).Decode(&info); err == nil {
			return &info
		}
	}
	if !bytes.Contains(data, []byte(`"secrets"`)) {
		return nil
	}
	var h struct {
		Secrets *SecretsInfo `json:"secrets"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return nil
	}
	return h.Secrets
}

// topLevelSecrets starts the secrets block in a document written by Encode
// (2-space indent: deeper keys named "secrets" are indented further).
var topLevelSecrets = []byte("\n  \"secrets\": ")

// SecretsError: the secrets of a state cannot be sealed or opened (no
// passphrase, a wrong one, a KMS key that cannot be used). Exit code 1.
type SecretsError struct {
	Provider string // "passphrase", "awskms://..."
	Err      error
}

func (e *SecretsError) Error() string {
	return fmt.Sprintf("secrets provider %s: %v", e.Provider, e.Err)
}
func (e *SecretsError) Unwrap() error { return e.Err }

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

package secrets

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// checkText is sealed into SecretsInfo.Check: opening it proves the key.
const checkText = "deployer-secrets-check"

// Sealer seals and opens the secret values of states with one Provider
// (statestore.Sealer). It derives or fetches each data key once. Every seal
// draws a fresh random nonce, so equal values have unrelated ciphertexts
// and a reader of the state cannot tell which secrets are the same. It keeps
// the envelope of every value it opened or sealed by its place in the state
// (resource, field, path) and its plaintext, so a value that did not change
// at its place is written with the same ciphertext (its history stays
// stable and a load-save round trip keeps the checksums). Safe for
// concurrent use.
type Sealer struct {
	p      Provider
	masker *Masker

	mu    sync.Mutex
	keys  map[string]cipher.AEAD    // block id (blockID) -> AEAD
	infos map[string]bool           // block ids whose Check was verified
	fresh *statestore.SecretsInfo   // the block of a key made for a state without one
	mac   map[string][]byte         // block id -> digest key (DigestKey)
	cache map[string]map[string]any // block id + "\x00" + place + "\x00" + plaintext JSON -> envelope
}

var _ statestore.Sealer = (*Sealer)(nil)

// NewSealer returns a Sealer over p; every value it opens or seals is added
// to m (nil: none).
func NewSealer(p Provider, m *Masker) *Sealer {
	return &Sealer{p: p, masker: m, keys: map[string]cipher.AEAD{}, infos: map[string]bool{}, cache: map[string]map[string]any{}}
}

// Provider returns the Sealer's provider.
func (s *Sealer) Provider() Provider { return s.p }

func (s *Sealer) fail(err error) error {
	var se *statestore.SecretsError
	if errors.As(err, &se) {
		return err
	}
	return &statestore.SecretsError{Provider: s.p.Name(), Err: err}
}

// blockID names the data key of a secrets block within a Sealer: its key
// id alone is not enough, since every data key KMS makes under one KMS key
// has that key's id (a state's and a saved plan's own key, say).
func blockID(info statestore.SecretsInfo) string {
	return info.Key + "\x00" + info.Salt + "\x00" + info.EncryptedKey
}

// aead returns the AEAD of info's key, deriving it (and verifying
// info.Check) on first use.
func (s *Sealer) aead(ctx context.Context, info statestore.SecretsInfo) (cipher.AEAD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := blockID(info)
	if a, ok := s.keys[id]; ok && s.infos[id] {
		return a, nil
	}
	if info.Provider != s.p.Name() {
		return nil, s.fail(fmt.Errorf("the state's secrets were encrypted by provider %s, but pulumi.secrets_provider is %s: "+
			"set it back to %s, or move the state with deployer secrets rotate --new-provider %s", info.Provider, s.p.Name(), info.Provider, s.p.Name()))
	}
	key, err := s.p.Key(ctx, info)
	if err != nil {
		return nil, s.fail(err)
	}
	a, err := aeadFor(key)
	if err != nil {
		return nil, s.fail(err)
	}
	if plain, err := openBytes(a, info.Key, info.Check); err != nil || string(plain) != checkText {
		if s.p.Name() == "passphrase" {
			return nil, s.fail(errors.New("the passphrase does not open the data key: set DEPLOYER_SECRETS_PASSPHRASE to the passphrase it was sealed with"))
		}
		return nil, s.fail(fmt.Errorf("the data key of key %s does not open its check value: it is not the key these secrets were sealed with", info.Key))
	}
	s.keys[id], s.infos[id] = a, true
	return a, nil
}

// digestLabel separates the digest key from every other use of a data key.
const digestLabel = "deployer saved-plan digest v1"

// DigestKey implements statestore.Sealer: HMAC-SHA256 of a fixed label under
// info's data key, after verifying the key opens info.Check (a wrong
// passphrase is a *statestore.SecretsError). Derived once per key.
func (s *Sealer) DigestKey(ctx context.Context, info statestore.SecretsInfo) ([]byte, error) {
	if _, err := s.aead(ctx, info); err != nil {
		return nil, err
	}
	s.mu.Lock()
	k, ok := s.mac[blockID(info)]
	s.mu.Unlock()
	if ok {
		return k, nil
	}
	key, err := s.p.Key(ctx, info)
	if err != nil {
		return nil, s.fail(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deriveDigestKey(blockID(info), key), nil
}

// deriveDigestKey returns (and keeps) the digest key of data key key, whose
// block id is id. Called with s.mu held.
func (s *Sealer) deriveDigestKey(id string, key []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(digestLabel))
	k := h.Sum(nil)
	if s.mac == nil {
		s.mac = map[string][]byte{}
	}
	s.mac[id] = k
	return k
}

// FreshKey implements statestore.Sealer: the secrets block of the data key
// a first write of a state without one seals with (made once per Sealer by
// the provider's NewKey, wrapped as every state's data key is). Its digest
// key is derived at once, so DigestKey of the block costs nothing more.
// Errors as Check.
func (s *Sealer) FreshKey(ctx context.Context) (statestore.SecretsInfo, error) {
	info, _, err := s.freshKey(ctx)
	if err != nil {
		return statestore.SecretsInfo{}, err
	}
	return *info, nil
}

// freshKey returns the secrets block (and AEAD) of a new data key, made once
// per Sealer.
func (s *Sealer) freshKey(ctx context.Context) (*statestore.SecretsInfo, cipher.AEAD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fresh != nil {
		return s.fresh, s.keys[blockID(*s.fresh)], nil
	}
	key, info, err := s.p.NewKey(ctx)
	if err != nil {
		return nil, nil, s.fail(err)
	}
	a, err := aeadFor(key)
	if err != nil {
		return nil, nil, s.fail(err)
	}
	if info.Check, err = sealBytes(a, info.Key, []byte(checkText)); err != nil {
		return nil, nil, s.fail(err)
	}
	s.fresh = &info
	id := blockID(info)
	s.keys[id], s.infos[id] = a, true
	s.deriveDigestKey(id, key)
	return s.fresh, a, nil
}

// Check implements statestore.Sealer: it opens info's key (a wrong
// passphrase or an unusable KMS key is a *statestore.SecretsError), or, with
// no info and needKey, makes the key a first write will use.
func (s *Sealer) Check(ctx context.Context, info *statestore.SecretsInfo, needKey bool) error {
	if info != nil {
		_, err := s.aead(ctx, *info)
		return err
	}
	if needKey {
		_, _, err := s.freshKey(ctx)
		return err
	}
	return nil
}

// Open implements statestore.Sealer: every envelope in the resources'
// desired_config, actual_state and outputs and in the outputs of st becomes
// the value it holds.
func (s *Sealer) Open(ctx context.Context, st *statestore.State) error {
	var a cipher.AEAD
	var learned []string
	defer func() { s.masker.Add(learned...) }()
	open := func(place string, env map[string]any) (any, error) {
		provider, key := EnvelopeKey(env)
		if st.Secrets == nil {
			return nil, s.fail(fmt.Errorf("the state holds a value encrypted by %s key %s but has no secrets block", provider, key))
		}
		if key != st.Secrets.Key {
			return nil, s.fail(fmt.Errorf("the state holds a value encrypted with key %s, not with its key %s", key, st.Secrets.Key))
		}
		if a == nil {
			var err error
			if a, err = s.aead(ctx, *st.Secrets); err != nil {
				return nil, err
			}
		}
		ct, _ := env["ciphertext"].(string)
		plain, err := openBytes(a, key, ct)
		if err != nil {
			return nil, s.fail(fmt.Errorf("a secret value does not open with key %s: %w", key, err))
		}
		dec := json.NewDecoder(bytes.NewReader(plain))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, s.fail(fmt.Errorf("a secret value does not decode: %w", err))
		}
		s.mu.Lock()
		s.cache[blockID(*st.Secrets)+"\x00"+place+"\x00"+string(plain)] = env
		s.mu.Unlock()
		learned = append(learned, Strings(v)...)
		return v, nil
	}
	for addr, r := range st.Resources {
		for i, m := range []map[string]any{r.DesiredConfig, r.ActualState, r.Outputs} {
			if err := openMap(resourcePlace(addr, i), m, open); err != nil {
				return err
			}
		}
		if r.Inputs != nil {
			for dep, m := range r.Inputs.Dependencies {
				if err := openMap(inputsPlace(addr, dep), m, open); err != nil {
					return err
				}
			}
		}
	}
	return openMap("outputs", st.Outputs, open)
}

// resourcePlace names field i (desired_config, actual_state, outputs) of
// the resource at addr; inputsPlace the outputs of dep recorded as its
// inputs. With the path below them, a place keys the envelope cache.
func resourcePlace(addr string, i int) string { return addr + "\x00" + strconv.Itoa(i) }
func inputsPlace(addr, dep string) string     { return addr + "\x00inputs\x00" + dep }

// openMap replaces the envelopes under m in place; place names m.
func openMap(place string, m map[string]any, open func(string, map[string]any) (any, error)) error {
	for k, v := range m {
		nv, changed, err := openValue(place+"\x00"+k, v, open)
		if err != nil {
			return err
		}
		if changed {
			m[k] = nv
		}
	}
	return nil
}

func openValue(place string, v any, open func(string, map[string]any) (any, error)) (any, bool, error) {
	switch t := v.(type) {
	case map[string]any:
		if sensitive.IsEnvelope(t) {
			nv, err := open(place, t)
			return nv, err == nil, err
		}
		return nil, false, openMap(place, t, open)
	case []any:
		for i, x := range t {
			nv, changed, err := openValue(place+"\x00"+strconv.Itoa(i), x, open)
			if err != nil {
				return nil, false, err
			}
			if changed {
				t[i] = nv
			}
		}
	}
	return nil, false, nil
}

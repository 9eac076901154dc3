package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// EnvelopeKey returns the provider and key named by an envelope.
func EnvelopeKey(v any) (provider, key string) {
	m, _ := v.(map[string]any)
	provider, _ = m["provider"].(string)
	key, _ = m["key"].(string)
	return provider, key
}

// errWrongKey: the data key does not open a ciphertext (GCM authentication failed).
var errWrongKey = errors.New("the key does not open the ciphertext")

// aeadFor returns AES-256-GCM over a 32-byte key.
func aeadFor(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// additionalData binds a ciphertext to the key id it was made with.
func additionalData(keyID string) []byte { return []byte("deployer-secret-v1:" + keyID) }

func sealBytes(aead cipher.AEAD, keyID string, plain []byte) (string, error) {
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("random nonce: %w", err)
	}
	return base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, additionalData(keyID))), nil
}

func openBytes(aead cipher.AEAD, keyID, ciphertext string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(ciphertext)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, errors.New("the ciphertext is not base64 of a nonce and a sealed value")
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, raw[:n], raw[n:], additionalData(keyID))
	if err != nil {
		return nil, errWrongKey
	}
	return plain, nil
}

package secrets_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/file"
)

func stateWithSecrets() *statestore.State {
	st := statestore.NewState("shop", "dev")
	st.Serial = 1
	st.Resources["app/db"] = &statestore.Resource{
		Kind: "Command", APIVersion: statestore.APIVersion, Status: "ready",
		DesiredConfig: map[string]any{
			"user":     "admin",
			"password": "pw-plain-1",
			"tls":      map[string]any{"cert": "CERT", "private_key": "KEY-material"},
			"token":    map[string]any{"secret": true, "value": "tok-123"},
			"extra":    []any{map[string]any{"secret": true, "value": json.Number("42")}},
			"marked":   map[string]any{"secret": true, "value": "marked-value"},
		},
		ActualState:  map[string]any{"dsn": "postgres://admin:pw-plain-1@db"},
		Outputs:      map[string]any{"api_key": "ak-999", "host": "db"},
		Dependencies: []string{},
	}
	st.Resources["app/web"] = &statestore.Resource{
		Kind: "Command", APIVersion: statestore.APIVersion, Status: "ready",
		DesiredConfig: map[string]any{}, ActualState: map[string]any{}, Outputs: map[string]any{},
		Dependencies: []string{"app/db"},
		Inputs: &statestore.ResolvedInputs{Dependencies: map[string]map[string]any{
			"app/db": {"api_key": "sha256:1234", "dsn": "postgres://admin:pw-plain-1@db", "host": "db"},
		}},
	}
	st.Outputs["deploy_token"] = "top-level-token"
	return st
}

func store(t *testing.T, dir string, s *secrets.Sealer) *statestore.Store {
	t.Helper()
	b, err := file.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if s == nil {
		return statestore.New(b)
	}
	return statestore.New(b, statestore.WithSealer(s))
}

func TestSealedStateKeepsNoPlainSecretAndOpensBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := store(t, dir, newSealer(t, "pass one"))
	want := stateWithSecrets()
	if _, err := s.Save(ctx, want, statestore.Head{}, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := file.New(dir)
	raw, _, err := b.Read(ctx, "shop", "dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range []string{"pw-plain-1", "KEY-material", "tok-123", "marked-value", "ak-999", "top-level-token", "sha256:1234"} {
		if bytes.Contains(raw, []byte(plain)) {
			t.Errorf("stored state holds %q", plain)
		}
	}
	for _, kept := range []string{`"user": "admin"`, `"cert": "CERT"`, `"host": "db"`, `"secrets": {`, `"provider": "passphrase"`, `"deployer:secret": "v1"`} {
		if !bytes.Contains(raw, []byte(kept)) {
			t.Errorf("stored state lacks %s:\n%s", kept, raw)
		}
	}
	// Verification needs no key: a Store without a Sealer loads it, envelopes kept.
	sealed, _, err := store(t, dir, nil).Load(ctx, "shop", "dev")
	if err != nil {
		t.Fatalf("verify without a key: %v", err)
	}
	if !sensitive.IsEnvelope(sealed.Resources["app/db"].DesiredConfig["password"]) {
		t.Errorf("password should stay an envelope without a key: %v", sealed.Resources["app/db"].DesiredConfig["password"])
	}
	// A new process with the passphrase opens every value as it was.
	got, head, err := store(t, dir, newSealer(t, "pass one")).Load(ctx, "shop", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Resources, got.Resources); diff != "" {
		t.Errorf("opened resources differ (-saved +loaded):\n%s", diff)
	}
	if got.Outputs["deploy_token"] != "top-level-token" {
		t.Errorf("top-level output: %v", got.Outputs["deploy_token"])
	}
	// Saving it unchanged keeps every ciphertext, so the checksums stay.
	got.Serial++
	s2 := store(t, dir, newSealer(t, "pass one"))
	got2, head2, _ := s2.Load(ctx, "shop", "dev")
	got2.Serial++
	if _, err := s2.Save(ctx, got2, head2, nil); err != nil {
		t.Fatal(err)
	}
	if got2.Checksums != want.Checksums {
		t.Errorf("an unchanged state re-saved should keep its checksums: %+v vs %+v", got2.Checksums, want.Checksums)
	}
	_ = head
}

func TestWrongPassphraseIsASecretsErrorNamingTheProvider(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := store(t, dir, newSealer(t, "right")).Save(ctx, stateWithSecrets(), statestore.Head{}, nil); err != nil {
		t.Fatal(err)
	}
	wrong := store(t, dir, newSealer(t, "wrong"))
	for name, err := range map[string]error{
		"check": wrong.CheckSecrets(ctx, "shop", "dev", false),
		"load":  func() error { _, _, err := wrong.Load(ctx, "shop", "dev"); return err }(),
	} {
		var se *statestore.SecretsError
		if !errors.As(err, &se) || se.Provider != "passphrase" || !strings.Contains(err.Error(), "secrets provider passphrase: the passphrase does not open") {
			t.Errorf("%s: want a SecretsError naming the passphrase provider, got %v", name, err)
		}
		var ce *statestore.ChecksumError
		if errors.As(err, &ce) {
			t.Errorf("%s: a wrong passphrase is not a checksum error", name)
		}
	}
	none := store(t, dir, newSealer(t, ""))
	if err := none.CheckSecrets(ctx, "shop", "dev", false); err == nil || !strings.Contains(err.Error(), "DEPLOYER_SECRETS_PASSPHRASE is not set") {
		t.Errorf("no passphrase: %v", err)
	}
	// No state yet: a key is needed only when there is something to seal.
	if err := none.CheckSecrets(ctx, "shop", "other", false); err != nil {
		t.Errorf("no state and no secrets needs no key: %v", err)
	}
	if err := none.CheckSecrets(ctx, "shop", "other", true); err == nil {
		t.Errorf("no state but secrets to seal should need the passphrase")
	}
}

func TestPlainStateLoadsAndIsSealedOnNextSave(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := store(t, dir, nil).Save(ctx, stateWithSecrets(), statestore.Head{}, nil); err != nil {
		t.Fatal(err)
	}
	s := store(t, dir, newSealer(t, "p"))
	st, head, err := s.Load(ctx, "shop", "dev")
	if err != nil {
		t.Fatalf("an old plain state should load: %v", err)
	}
	st.Serial++
	if _, err := s.Save(ctx, st, head, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := file.New(dir)
	raw, _, _ := b.Read(ctx, "shop", "dev")
	if bytes.Contains(raw, []byte("pw-plain-1")) {
		t.Errorf("the next save should seal the secrets")
	}
}

func TestSealerRefusesAStateOfAnotherProvider(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := store(t, dir, newSealer(t, "p")).Save(ctx, stateWithSecrets(), statestore.Head{}, nil); err != nil {
		t.Fatal(err)
	}
	p, err := secrets.NewProvider("awskms://alias/deployer?region=us-east-1", passphraseEnv(""))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = store(t, dir, secrets.NewSealer(p, nil)).Load(ctx, "shop", "dev")
	if err == nil || !strings.Contains(err.Error(), "deployer secrets rotate --new-provider awskms://alias/deployer?region=us-east-1") {
		t.Errorf("a state of another provider should say how to move it: %v", err)
	}
}

func TestNewProviderRefusesUnknownSchemes(t *testing.T) {
	for _, spec := range []string{"gcpkms://x", "hashivault://k", "awskms://?region=x"} {
		if _, err := secrets.NewProvider(spec, passphraseEnv("")); err == nil {
			t.Errorf("%s: want an error", spec)
		}
	}
	for _, spec := range []string{"", "passphrase", "awskms://alias/x?region=eu-west-1", "awskms:///arn:aws:kms:us-east-1:111122223333:key/abc"} {
		p, err := secrets.NewProvider(spec, passphraseEnv(""))
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if spec != "" && p.Name() != spec {
			t.Errorf("%s: name %s", spec, p.Name())
		}
	}
}

// A state whose secrets block asks for another scrypt cost (an edited
// state asking for 16 GiB) is refused before any derivation.
func TestOnlyTheKDFDeployerWritesIsAccepted(t *testing.T) {
	p, err := secrets.NewProvider("passphrase", func(k string) string {
		if k == "DEPLOYER_SECRETS_PASSPHRASE" {
			return "pass-word-1"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	_, info, err := p.NewKey(context.Background())
	if err != nil || info.KDF != "scrypt:N=32768,r=8,p=1" {
		t.Fatalf("NewKey: %v %q", err, info.KDF)
	}
	for _, kdf := range []string{"scrypt:N=16777216,r=8,p=1", "scrypt:N=32768,r=1024,p=1", "scrypt:N=32768,r=8,p=64", "argon2", ""} {
		bad := info
		bad.KDF = kdf
		if _, err := p.Key(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "deployer writes and reads only scrypt:N=32768,r=8,p=1") {
			t.Errorf("kdf %q: %v", kdf, err)
		}
	}
	if _, err := p.Key(context.Background(), info); err != nil {
		t.Errorf("the written kdf: %v", err)
	}
}

// The digest key of saved plans comes from the state's data key: the same
// for every Sealer of the right passphrase, refused with a wrong one, and
// never the data key itself.
func TestDigestKeyIsDerivedFromTheStatesDataKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := store(t, dir, newSealer(t, "right")).Save(ctx, stateWithSecrets(), statestore.Head{}, nil); err != nil {
		t.Fatal(err)
	}
	st, _, err := store(t, dir, newSealer(t, "right")).Load(ctx, "shop", "dev")
	if err != nil {
		t.Fatal(err)
	}
	a, err := store(t, dir, newSealer(t, "right")).DigestKey(ctx, st.Secrets)
	if err != nil || len(a) != 32 {
		t.Fatalf("DigestKey = %x, %v; want 32 bytes", a, err)
	}
	b, _ := store(t, dir, newSealer(t, "right")).DigestKey(ctx, st.Secrets)
	if !bytes.Equal(a, b) {
		t.Errorf("two Sealers of one passphrase derived different digest keys")
	}
	if _, err := store(t, dir, newSealer(t, "wrong")).DigestKey(ctx, st.Secrets); err == nil {
		t.Errorf("a wrong passphrase gave a digest key")
	}
	if k, err := store(t, dir, newSealer(t, "right")).DigestKey(ctx, nil); k != nil || err != nil {
		t.Errorf("no data key: DigestKey = %x, %v; want nil, nil", k, err)
	}
}

// A saved plan made when the state has no data key keys its digests with
// the Sealer's fresh key: its block is wrapped as a state's, so another
// Sealer of the same passphrase derives the same digest key from it and
// another passphrase none.
func TestFreshKeyIsWrappedLikeAStatesKey(t *testing.T) {
	ctx := context.Background()
	s := newSealer(t, "right")
	info, err := s.FreshKey(ctx)
	if err != nil || info.Provider != "passphrase" || info.Salt == "" || info.Check == "" {
		t.Fatalf("FreshKey = %+v, %v; want a passphrase block with salt and check", info, err)
	}
	again, _ := s.FreshKey(ctx)
	if again != info {
		t.Errorf("a second FreshKey made another key: %+v, then %+v", info, again)
	}
	a, err := s.DigestKey(ctx, info)
	if err != nil || len(a) != 32 {
		t.Fatalf("DigestKey = %x, %v; want 32 bytes", a, err)
	}
	if b, err := newSealer(t, "right").DigestKey(ctx, info); err != nil || !bytes.Equal(a, b) {
		t.Errorf("another Sealer of the passphrase: digest key %x, %v; want %x", b, err, a)
	}
	if _, err := newSealer(t, "wrong").DigestKey(ctx, info); err == nil {
		t.Errorf("a wrong passphrase gave the digest key of the block")
	}
}

// sharedIDProvider names every data key it makes "shared", as KMS names
// every data key after the KMS key that made it; its "wrapping" is plain
// base64 (a test of the Sealer's bookkeeping, not of a provider).
type sharedIDProvider struct{}

func (sharedIDProvider) Name() string { return "shared" }

func (sharedIDProvider) NewKey(context.Context) ([]byte, statestore.SecretsInfo, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return key, statestore.SecretsInfo{Provider: "shared", Key: "shared", EncryptedKey: base64.StdEncoding.EncodeToString(key)}, nil
}

func (sharedIDProvider) Key(_ context.Context, info statestore.SecretsInfo) ([]byte, error) {
	return base64.StdEncoding.DecodeString(info.EncryptedKey)
}

// One Sealer keeps apart two data keys that share a key id (a state's
// fresh key and a saved plan's own key under one KMS key).
func TestBlocksThatShareAKeyIDKeepTheirOwnKeys(t *testing.T) {
	ctx := context.Background()
	first, err := secrets.NewSealer(sharedIDProvider{}, secrets.NewMasker()).FreshKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := secrets.NewSealer(sharedIDProvider{}, secrets.NewMasker())
	fresh, err := s.FreshKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, errA := s.DigestKey(ctx, fresh)
	b, errB := s.DigestKey(ctx, first)
	want, _ := secrets.NewSealer(sharedIDProvider{}, secrets.NewMasker()).DigestKey(ctx, first)
	if errA != nil || errB != nil || bytes.Equal(a, b) || !bytes.Equal(b, want) {
		t.Errorf("digest keys of two blocks with one key id: %x (%v) and %x (%v); want different ones, the second %x", a, errA, b, errB, want)
	}
}

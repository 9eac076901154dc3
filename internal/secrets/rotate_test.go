package secrets_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/deployer-dev/deployer/internal/secrets"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRotationProviderTakesOnlyTheNewPassphrase(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"DEPLOYER_SECRETS_PASSPHRASE": "old", "PULUMI_CONFIG_PASSPHRASE": "older", secrets.NewPassphraseVar: "new"}
	p, err := secrets.NewRotationProvider("passphrase", envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	key, info, err := p.NewKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for pass, want := range map[string]bool{"new": true, "old": false, "older": false} {
		q, err := secrets.NewProvider("passphrase", envOf(map[string]string{"DEPLOYER_SECRETS_PASSPHRASE": pass}))
		if err != nil {
			t.Fatal(err)
		}
		got, err := q.Key(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, key) != want {
			t.Errorf("passphrase %q opens the rotated key: %v, want %v", pass, !want, want)
		}
	}
}

func TestRotationProviderErrors(t *testing.T) {
	old := map[string]string{"DEPLOYER_SECRETS_PASSPHRASE": "old"}
	if _, err := secrets.NewRotationProvider("passphrase", envOf(old)); !errors.Is(err, secrets.ErrNoNewPassphrase) {
		t.Errorf("passphrase without %s: %v, want ErrNoNewPassphrase", secrets.NewPassphraseVar, err)
	}
	if _, err := secrets.NewRotationProvider("", envOf(old)); !errors.Is(err, secrets.ErrNoNewPassphrase) {
		t.Errorf("default provider without %s: %v, want ErrNoNewPassphrase", secrets.NewPassphraseVar, err)
	}
	if _, err := secrets.NewRotationProvider("vault://x", envOf(old)); err == nil || errors.Is(err, secrets.ErrNoNewPassphrase) {
		t.Errorf("unknown provider: %v, want NewProvider's error", err)
	}
	p, err := secrets.NewRotationProvider("awskms://alias/deployer?region=us-east-1", envOf(old))
	if err != nil || p.Name() != "awskms://alias/deployer?region=us-east-1" {
		t.Errorf("awskms needs no passphrase: %v, %v", p, err)
	}
}

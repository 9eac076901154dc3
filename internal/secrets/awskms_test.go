package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// An unreachable KMS is a clear error naming the provider. The provider
// against a real KMS API (local-kms, started by scripts/test.sh) is tested
// end to end in internal/e2e/awskms_test.go.
func TestAWSKMSUnreachableIsASecretsErrorNamingTheProvider(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_KMS", "http://"+testenv.ClosedAddr(t))
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	spec := "awskms://alias/deployer?region=us-east-1"
	p, err := secrets.NewProvider(spec, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s := secrets.NewSealer(p, nil)
	ctx := context.Background()
	for name, err := range map[string]error{
		"new key": s.Check(ctx, nil, true),
		"open": s.Check(ctx, &statestore.SecretsInfo{Provider: spec, Key: "arn:aws:kms:us-east-1:111122223333:key/k",
			EncryptedKey: "AQID", Check: "x"}, false),
	} {
		var se *statestore.SecretsError
		if !errors.As(err, &se) || se.Provider != spec || !strings.Contains(err.Error(), "secrets provider "+spec+": KMS ") {
			t.Errorf("%s: want a SecretsError naming %s and KMS, got %v", name, spec, err)
		}
	}
}

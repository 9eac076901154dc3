package secrets_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/deployer-dev/deployer/internal/secrets"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/file"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

// benchSecrets is how many of the 10,000 resources of the benchmark state
// hold a secret field.
const benchSecrets = 1000

func passphraseEnv(pass string) func(string) string {
	return func(k string) string {
		if k == "DEPLOYER_SECRETS_PASSPHRASE" {
			return pass
		}
		return ""
	}
}

func newSealer(tb testing.TB, pass string) *secrets.Sealer {
	tb.Helper()
	p, err := secrets.NewProvider("passphrase", passphraseEnv(pass))
	if err != nil {
		tb.Fatal(err)
	}
	return secrets.NewSealer(p, secrets.NewMasker())
}

// secretState is storetest.LargeState with a password in the desired_config
// of every tenth resource (1,000 secret fields in 10,000 resources).
func secretState(stack string) *statestore.State {
	st := storetest.LargeState(stack, "production", storetest.BenchResources)
	i := 0
	for _, addr := range sortedAddrs(st) {
		if i%(storetest.BenchResources/benchSecrets) == 0 {
			st.Resources[addr].DesiredConfig["password"] = fmt.Sprintf("pw-%06d-s3cr3t", i)
		}
		i++
	}
	return st
}

// benchLoadVerifySave measures one command's state round trip: load (read,
// verify checksums, open 1,000 secrets), change one resource, save (seal,
// checksum, write). fresh builds a new Sealer per round, so the scrypt key
// derivation every command pays once is included.
func benchLoadVerifySave(b *testing.B, fresh bool) {
	ctx := context.Background()
	be, err := file.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	sealer := newSealer(b, "bench passphrase")
	s := statestore.New(be, statestore.WithSealer(sealer))
	stack := "bench"
	head, err := s.Save(ctx, secretState(stack), statestore.Head{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if fresh {
			s = statestore.New(be, statestore.WithSealer(newSealer(b, "bench passphrase")))
		}
		st, h, err := s.Load(ctx, stack, "production")
		if err != nil {
			b.Fatal(err)
		}
		if h != head {
			b.Fatalf("loaded head %+v, want %+v", h, head)
		}
		st.Serial++
		st.Resources["service-0000/component-0"].Status = statestore.ResourceStatus(fmt.Sprintf("ready-%d", st.Serial))
		if head, err = s.Save(ctx, st, h, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadVerifySave10kWith1kSecrets: one process, key derived once.
func BenchmarkLoadVerifySave10kWith1kSecrets(b *testing.B) { benchLoadVerifySave(b, false) }

// BenchmarkLoadVerifySave10kWith1kSecretsNewKey: a new Sealer per round, as
// a new command: includes the scrypt derivation of the key.
func BenchmarkLoadVerifySave10kWith1kSecretsNewKey(b *testing.B) { benchLoadVerifySave(b, true) }

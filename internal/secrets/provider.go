package secrets

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/scrypt"

	"github.com/deployer-dev/deployer/internal/inputfile"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Provider makes and recovers the 32-byte data key of a state.
type Provider interface {
	// Name is "passphrase" or the awskms:// URL, as written in deployer.yaml.
	Name() string
	// NewKey returns a fresh data key and the secrets block that recovers it
	// (Check is filled by the caller).
	NewKey(ctx context.Context) ([]byte, statestore.SecretsInfo, error)
	// Key recovers the data key of info. A wrong passphrase is not detected
	// here but by info.Check.
	Key(ctx context.Context, info statestore.SecretsInfo) ([]byte, error)
}

// Passphrase variables, first set wins. DEPLOYER_SECRETS_PASSPHRASE is
// deployer's own; the Pulumi engine's PULUMI_CONFIG_PASSPHRASE serves both
// when only it is set (docs/secrets.md).
var passphraseVars = []string{"DEPLOYER_SECRETS_PASSPHRASE", "DEPLOYER_SECRETS_PASSPHRASE_FILE",
	"PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE"}

// NewProvider returns the provider named by spec (pulumi.secrets_provider):
// "" or "passphrase", or "awskms://KEY_ID?region=R". getenv reads the
// passphrase and AWS settings.
func NewProvider(spec string, getenv func(string) string) (Provider, error) {
	switch {
	case spec == "" || spec == "passphrase" || strings.HasPrefix(spec, "passphrase://"):
		return &passphrase{getenv: getenv}, nil
	case strings.HasPrefix(spec, "awskms://"):
		return newAWSKMS(spec, getenv)
	}
	return nil, fmt.Errorf("secrets provider %q is not supported: use passphrase or awskms://KEY_ID?region=REGION", spec)
}

// scrypt parameters of new states: 2^15 iterations, r=8, p=1 (the
// parameters recommended by the scrypt package for interactive logins,
// about 32 MB and a few tens of milliseconds once per command).
const (
	scryptN   = 1 << 15
	scryptR   = 8
	scryptP   = 1
	scryptKDF = "scrypt:N=32768,r=8,p=1"
)

type passphrase struct{ getenv func(string) string }

// maxPassphraseFile bounds a passphrase file, in bytes.
const maxPassphraseFile = 64 << 10

func (p *passphrase) Name() string { return "passphrase" }

// secret returns the passphrase, from a variable or the file a *_FILE
// variable names.
func (p *passphrase) secret() (string, error) {
	for _, name := range passphraseVars {
		v := p.getenv(name)
		if v == "" {
			continue
		}
		if strings.HasSuffix(name, "_FILE") {
			data, err := inputfile.Read(v, "passphrase file", maxPassphraseFile)
			if err != nil {
				return "", fmt.Errorf("read the passphrase file %s named by %s: %w", v, name, err)
			}
			return strings.TrimRight(string(data), "\r\n"), nil
		}
		return v, nil
	}
	return "", errors.New("DEPLOYER_SECRETS_PASSPHRASE is not set: export it (the same value on every run; it encrypts the secrets in the state), " +
		"or set pulumi.secrets_provider to awskms://KEY_ID?region=REGION")
}

func (p *passphrase) NewKey(context.Context) ([]byte, statestore.SecretsInfo, error) {
	pass, err := p.secret()
	if err != nil {
		return nil, statestore.SecretsInfo{}, err
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, statestore.SecretsInfo{}, err
	}
	key, err := scrypt.Key([]byte(pass), salt, scryptN, scryptR, scryptP, 32)
	if err != nil {
		return nil, statestore.SecretsInfo{}, err
	}
	sum := sha256.Sum256(salt)
	info := statestore.SecretsInfo{Provider: p.Name(), Key: "scrypt-" + hex.EncodeToString(sum[:6]),
		KDF: scryptKDF, Salt: base64.StdEncoding.EncodeToString(salt)}
	return key, info, nil
}

func (p *passphrase) Key(_ context.Context, info statestore.SecretsInfo) ([]byte, error) {
	// Only the parameters deployer writes: a cost read from the state would
	// let an edited state ask for gigabytes before any lock.
	if info.KDF != scryptKDF {
		return nil, fmt.Errorf("the state's secrets block has kdf %q; deployer writes and reads only %s (restore a state deployer wrote)", info.KDF, scryptKDF)
	}
	n, r, par := scryptN, scryptR, scryptP
	salt, err := base64.StdEncoding.DecodeString(info.Salt)
	if err != nil || len(salt) == 0 {
		return nil, errors.New("the state's secrets block has no valid salt")
	}
	pass, err := p.secret()
	if err != nil {
		return nil, err
	}
	return scrypt.Key([]byte(pass), salt, n, r, par, 32)
}

//go:build unix

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// kmsKey creates a symmetric key with a fresh alias in the local KMS
// (local-kms, scripts/test-servers/kms.sh) and returns the alias
// ("alias/deployer-e2e-...").
func kmsKey(t *testing.T, endpoint string) string {
	t.Helper()
	c := kms.New(kms.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	ctx := context.Background()
	key, err := c.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("deployer e2e")})
	if err != nil {
		t.Fatalf("create a key in local-kms at %s: %v", endpoint, err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	alias := "alias/deployer-e2e-" + hex.EncodeToString(b[:])
	if _, err := c.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String(alias), TargetKeyId: key.KeyMetadata.KeyId}); err != nil {
		t.Fatalf("create alias %s: %v", alias, err)
	}
	return alias
}

// kmsYAML is secretYAML with the secrets provider PROVIDER.
func kmsYAML(provider string) string {
	return strings.Replace(secretYAML, "environments: {dev: {}}\n",
		"environments: {dev: {}}\npulumi: {secrets_provider: '"+provider+"'}\n", 1)
}

type secretsBlock struct {
	Secrets struct {
		Provider     string `json:"provider"`
		Key          string `json:"key"`
		EncryptedKey string `json:"encrypted_key"`
	} `json:"secrets"`
}

func (p *project) secretsBlock() secretsBlock {
	p.t.Helper()
	var s secretsBlock
	if err := json.Unmarshal(p.read(".deployer/stacks/qs/dev/state.json"), &s); err != nil {
		p.t.Fatal(err)
	}
	return s
}

// awskms:// end to end against a real KMS API: a stack deployed with a
// passphrase is rotated to KMS (a new serial only KMS opens), plans with no
// change, deploys a change sealed with the KMS data key, and is rotated back
// to a passphrase; the secret is never stored in plain text.
func TestAWSKMSDeployPlanAndRotate(t *testing.T) {
	endpoint := testenv.Require(t, testenv.KMSEndpoint, "local-kms")
	alias := kmsKey(t, endpoint)
	provider := "awskms://" + alias + "?region=us-east-1"
	p := newProject(t, secretYAML)
	p.write("db.sh", secretScript)
	p.env = []string{"APP_PASSWORD=" + appPassword, "PULUMI_CONFIG_PASSPHRASE=", "DEPLOYER_SECRETS_PASSPHRASE=first-pass-1",
		"AWS_ENDPOINT_URL_KMS=" + endpoint, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=", "AWS_PROFILE="}
	p.mustRun(0, "deploy", "-e", "dev", "--yes")

	// passphrase -> KMS; deployer.yaml then names the KMS key.
	p.mustRun(0, "secrets", "rotate", "-e", "dev", "--new-provider", provider)
	sb := p.secretsBlock()
	if sb.Secrets.Provider != provider || sb.Secrets.EncryptedKey == "" || !strings.HasPrefix(sb.Secrets.Key, "arn:aws:kms:us-east-1:") {
		t.Fatalf("the state's secrets block should name the KMS provider, the key's ARN and the encrypted data key: %+v", sb)
	}
	r := p.mustRun(1, "plan", "-e", "dev")
	if !strings.Contains(r.stderr, "secrets provider") {
		t.Errorf("deployer.yaml still naming passphrase should not open a KMS state:\n%s", r)
	}
	p.write("deployer.yaml", kmsYAML(provider))
	p.env[2] = "DEPLOYER_SECRETS_PASSPHRASE="
	r = p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	if !strings.Contains(r.stdout, "No changes") {
		t.Errorf("a plan right after the rotation should see no change:\n%s", r)
	}
	// A deploy with KMS: a new password, sealed with the KMS data key.
	p.env[0] = "APP_PASSWORD=" + appPassword + "-v2"
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	if sb := p.secretsBlock(); sb.Secrets.Provider != provider {
		t.Fatalf("a deploy should keep the KMS provider: %+v", sb)
	}

	// KMS -> passphrase.
	p.env = append(p.env, "DEPLOYER_SECRETS_NEW_PASSPHRASE=rotated-pass-2")
	p.mustRun(0, "secrets", "rotate", "-e", "dev", "--new-provider", "passphrase")
	if sb := p.secretsBlock(); sb.Secrets.Provider != "passphrase" || sb.Secrets.EncryptedKey != "" {
		t.Fatalf("after rotating to passphrase: %+v", sb)
	}
	p.write("deployer.yaml", secretYAML)
	p.env = append(p.env[:len(p.env)-1], "DEPLOYER_SECRETS_PASSPHRASE=rotated-pass-2")
	p.mustRun(0, "plan", "-e", "dev", "--detailed-exitcode")
	if st := p.state("qs", "dev"); st.Serial != 4 || st.DeploymentHistory[0].Type != "rotate-secrets" || st.DeploymentHistory[2].Type != "rotate-secrets" {
		t.Errorf("deploy, rotate, deploy, rotate should write serials 1-4: serial %d, %+v", st.Serial, st.DeploymentHistory)
	}
	for _, v := range []string{appPassword, appPassword + "-v2"} {
		grepTree(t, filepath.Join(p.dir, ".deployer"), v)
	}
}

// A KMS alias that does not exist, and a KMS endpoint that does not answer,
// stop deploy (and, once the state holds KMS-sealed secrets, plan) before
// the lock, with an error naming the provider and what to check; nothing is
// written. A plan of a new stack decrypts nothing and needs no KMS.
func TestAWSKMSMissingAliasOrUnreachableEndpoint(t *testing.T) {
	endpoint := testenv.Require(t, testenv.KMSEndpoint, "local-kms")
	env := func(endpoint string) []string {
		return []string{"APP_PASSWORD=" + appPassword, "PULUMI_CONFIG_PASSPHRASE=", "DEPLOYER_SECRETS_PASSPHRASE=",
			"AWS_ENDPOINT_URL_KMS=" + endpoint, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
			"AWS_REGION=", "AWS_PROFILE=", "AWS_MAX_ATTEMPTS=1"}
	}
	check := func(t *testing.T, p *project, provider, want string, commands ...[]string) {
		t.Helper()
		audit := filepath.Join(p.dir, "audit.log")
		before, _ := os.ReadFile(filepath.Join(p.dir, ".deployer/stacks/qs/dev/state.json"))
		for _, args := range commands {
			r := p.mustRun(1, append(args, "--audit-log", audit)...)
			if !strings.Contains(r.stderr, "secrets provider "+provider) || !strings.Contains(r.stderr, want) ||
				!strings.Contains(r.stderr, "check the key id, its region and your permissions") {
				t.Errorf("%v: the error should name the provider, say %q and what to check:\n%s", args, want, r)
			}
		}
		if data, _ := os.ReadFile(audit); strings.Contains(string(data), "lock.acquired") {
			t.Errorf("no lock should have been taken:\n%s", data)
		}
		after, _ := os.ReadFile(filepath.Join(p.dir, ".deployer/stacks/qs/dev/state.json"))
		if string(before) != string(after) {
			t.Error("the state should not have been written")
		}
	}
	deploy := []string{"deploy", "-e", "dev", "--yes"}
	plan := []string{"plan", "-e", "dev"}

	t.Run("missing alias", func(t *testing.T) {
		provider := "awskms://alias/deployer-e2e-does-not-exist?region=us-east-1"
		p := newProject(t, kmsYAML(provider))
		p.write("db.sh", secretScript)
		p.env = env(endpoint)
		p.mustRun(0, plan...)
		check(t, p, provider, "NotFoundException", deploy)
	})
	t.Run("unreachable endpoint", func(t *testing.T) {
		provider := "awskms://alias/deployer?region=us-east-1"
		p := newProject(t, kmsYAML(provider))
		p.write("db.sh", secretScript)
		p.env = env("http://" + testenv.ClosedAddr(t))
		check(t, p, provider, "connection refused", deploy)
	})
	t.Run("deployed state, endpoint gone", func(t *testing.T) {
		provider := "awskms://" + kmsKey(t, endpoint) + "?region=us-east-1"
		p := newProject(t, kmsYAML(provider))
		p.write("db.sh", secretScript)
		p.env = env(endpoint)
		p.mustRun(0, deploy...)
		p.env = env("http://" + testenv.ClosedAddr(t))
		check(t, p, provider, "connection refused", plan, deploy)
	})
}

package secrets

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// kmsAPI is the part of the KMS client the provider calls.
type kmsAPI interface {
	GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, opts ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, opts ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

// awsKMS is envelope encryption with AWS KMS: one data key per state, made by
// GenerateDataKey and stored encrypted by KMS in the state's secrets block;
// Decrypt recovers it. Endpoint, region and credentials come from the SDK's
// standard chain (AWS_ENDPOINT_URL_KMS, AWS_REGION, AWS_PROFILE), the URL's
// ?region= winning.
type awsKMS struct {
	spec, keyID, region string
	client              kmsAPI // built on first use
}

// newAWSKMS parses awskms://KEY_ID?region=R. KEY_ID is a key id, an alias
// (alias/name) or an ARN (awskms:///arn:aws:kms:...).
func newAWSKMS(spec string, _ func(string) string) (*awsKMS, error) {
	rest := strings.TrimPrefix(spec, "awskms://")
	id, query, _ := strings.Cut(rest, "?")
	id = strings.TrimPrefix(id, "/")
	q, err := url.ParseQuery(query)
	if err != nil || id == "" {
		return nil, fmt.Errorf("secrets provider %q: write awskms://KEY_ID?region=REGION (KEY_ID a key id, alias/NAME, or /arn:aws:kms:...)", spec)
	}
	return &awsKMS{spec: spec, keyID: id, region: q.Get("region")}, nil
}

func (k *awsKMS) Name() string { return k.spec }

func (k *awsKMS) api(ctx context.Context) (kmsAPI, error) {
	if k.client != nil {
		return k.client, nil
	}
	var opts []func(*config.LoadOptions) error
	if k.region != "" {
		opts = append(opts, config.WithRegion(k.region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: add ?region=REGION to the awskms:// URL or set AWS_REGION")
	}
	k.client = kms.NewFromConfig(cfg)
	return k.client, nil
}

func (k *awsKMS) NewKey(ctx context.Context) ([]byte, statestore.SecretsInfo, error) {
	c, err := k.api(ctx)
	if err != nil {
		return nil, statestore.SecretsInfo{}, err
	}
	out, err := c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String(k.keyID), KeySpec: types.DataKeySpecAes256})
	if err != nil {
		return nil, statestore.SecretsInfo{}, fmt.Errorf("KMS GenerateDataKey with key %s: %w (check the key id, its region and your permissions)", k.keyID, err)
	}
	keyName := k.keyID
	if out.KeyId != nil {
		keyName = *out.KeyId
	}
	return out.Plaintext, statestore.SecretsInfo{Provider: k.spec, Key: keyName,
		EncryptedKey: base64.StdEncoding.EncodeToString(out.CiphertextBlob)}, nil
}

func (k *awsKMS) Key(ctx context.Context, info statestore.SecretsInfo) ([]byte, error) {
	blob, err := base64.StdEncoding.DecodeString(info.EncryptedKey)
	if err != nil || len(blob) == 0 {
		return nil, errors.New("the state's secrets block has no valid encrypted_key")
	}
	c, err := k.api(ctx)
	if err != nil {
		return nil, err
	}
	out, err := c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: blob, KeyId: aws.String(k.keyID)})
	if err != nil {
		return nil, fmt.Errorf("KMS Decrypt of the state's data key with key %s: %w (check the key id, its region and your permissions)", info.Key, err)
	}
	return out.Plaintext, nil
}

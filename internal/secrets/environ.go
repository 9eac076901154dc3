package secrets

import "strings"

// ChildEnviron returns a copy of env ("NAME=value" entries) without the
// variables that hold or name a state's secrets key: DEPLOYER_SECRETS_*
// and PULUMI_CONFIG_PASSPHRASE*. Command components, guard stop commands
// and lock exec commands start from it; a child that needs a key gets it
// only when the user passes it explicitly (docs/secrets.md#masked-everywhere).
// The Pulumi CLI, which needs its passphrase, does not.
func ChildEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "DEPLOYER_SECRETS_") || strings.HasPrefix(name, "PULUMI_CONFIG_PASSPHRASE") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

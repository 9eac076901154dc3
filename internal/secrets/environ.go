package secrets

import (
	"strings"

	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

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

// CommandLine returns args joined by spaces as a command line to record
// (a lock record's command, the audit log): an argument NAME=value whose
// NAME looks secret (sensitive.IsSecretKey: PULUMI_CONFIG_PASSPHRASE=...,
// --db-password=...) is written NAME=*** (docs/secrets.md#masked-everywhere).
func CommandLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		name, _, ok := strings.Cut(a, "=")
		if ok && sensitive.IsSecretKey(strings.TrimLeft(name, "-")) {
			a = name + "=" + Hidden
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

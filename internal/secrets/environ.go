package secrets

import (
	"strings"

	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

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

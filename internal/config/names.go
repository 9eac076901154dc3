package config

import (
	"fmt"
	"regexp"
)

// nameRE is the rule for stack, environment, service and component names
// (docs/configuration.md#names): they become lock keys, state paths and S3 keys, so nothing that
// could escape a path or a key separator ("/", "..", ":", spaces) passes.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// KnownKinds are the component kinds deployer.yaml may name. The engines'
// kind catalogs are the source: cmd/deployer sets KnownKinds from them at
// startup (engine.Engine.Kinds), and a test there keeps this default, which
// packages loading configs in their own tests see, equal to them.
var KnownKinds = []string{"Command", "ElastiCacheRedis", "MicroService", "PulumiResource", "RDS", "StackReference"}

// KindCommand is the kind applied by the local Command engine.
const KindCommand = "Command"

// ValidateName checks a stack, environment, service or component name against
// ^[a-z0-9][a-z0-9-]{0,62}$. what is the noun used in the error ("environment").
// The error says what is allowed, e.g.
//
//	environment "Prod": names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters
func ValidateName(what, name string) error {
	if nameRE.MatchString(name) {
		return nil
	}
	if name == "" {
		return fmt.Errorf("%s name is empty: names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters", what)
	}
	return fmt.Errorf("%s %q: %s", what, name, nameRule)
}

const nameRule = "names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters"

func isKnownKind(k string) bool {
	for _, kk := range KnownKinds {
		if k == kk {
			return true
		}
	}
	return false
}

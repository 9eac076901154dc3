package config

import (
	"fmt"
	"regexp"
	"strings"
)

// nameRE is the rule for stack, environment, service and component names
// (docs/configuration.md#names): they become lock keys, state paths and S3 keys, so nothing that
// could escape a path or a key separator ("/", "..", ":", spaces) passes.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

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

// ValidateAddress checks a component address (SERVICE/NAME) or a service
// name (SERVICE), as moved: entries and state mv take them: each part
// passes ValidateName's rule, and there is at most one "/". The error
// quotes the address and says what is allowed.
func ValidateAddress(a string) error {
	for part := range strings.SplitSeq(a, "/") {
		if ValidateName("name", part) != nil {
			return fmt.Errorf("invalid address %q: %s", a, nameRule)
		}
	}
	if strings.Count(a, "/") > 1 {
		return fmt.Errorf("invalid address %q: write SERVICE/NAME or SERVICE", a)
	}
	return nil
}

const nameRule = "names are lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters"

// Address returns the address of component name of service: "service/name"
// (docs/configuration.md#keys). SplitAddress takes one apart.
func Address(service, name string) string { return service + "/" + name }

// SplitAddress returns the service and the component name of address
// "service/name"; the name is "" when addr has no "/".
func SplitAddress(addr string) (service, name string) {
	service, name, _ = strings.Cut(addr, "/")
	return service, name
}

// normalizeDep turns a depends_on entry into a full address.
func normalizeDep(svc, dep string) (string, bool) {
	s, name, full := strings.Cut(dep, "/")
	if !full {
		s, name = svc, dep
	}
	if nameRE.MatchString(s) && nameRE.MatchString(name) {
		return Address(s, name), true
	}
	return "", false
}

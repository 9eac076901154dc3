package proc

import (
	"os"
	"runtime"
	"strings"

	"github.com/deployer-dev/deployer/internal/secrets/sensitive"
)

// Child is a class of child process, for Environ
// (docs/secrets.md#what-children-get).
type Child int

const (
	// UserCommand: a Command component, a guard stop command, a `lock
	// exec` command: the user's own commands, which may need anything of
	// the user's environment (cloud credentials, their own variables).
	UserCommand Child = iota
	// PulumiCLI: the Pulumi CLI and, as they inherit its environment, its
	// language hosts and provider plugins (a command:local:Command runs
	// its commands with the provider's environment).
	PulumiCLI
	// Git: git, which deployer runs to read a commit, a branch or the
	// files changed since a revision.
	Git
)

// Environ returns the environment a child of class c starts from: env
// ("NAME=value" entries, deployer's own) less what c may not get. It is the
// one rule of what children see:
//
//   - deployer's key material, DEPLOYER_SECRETS_* (the passphrase, the new
//     one of a rotation, their _FILE forms), reaches no child;
//   - the CI's tokens (sensitive.IsCIToken: GITHUB_TOKEN, GH_TOKEN,
//     GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN, ACTIONS_*_TOKEN) reach
//     no child;
//   - Pulumi's own passphrase (PULUMI_CONFIG_PASSPHRASE and its _FILE form)
//     reaches the Pulumi CLI only;
//   - git gets an allow-list only: PATH, HOME, the user's name, locale,
//     time zone, temporary directory, GIT_*, SSH_AUTH_SOCK, XDG_* and the
//     variables Windows programs need;
//   - everything else reaches user commands and the Pulumi CLI.
//
// A user command that needs a withheld value gets it only when the user
// passes it explicitly (a `${env:NAME}` in the component's config, `env
// NAME=...` before a lock exec command).
func Environ(c Child, env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if allowed(c, name) {
			out = append(out, kv)
		}
	}
	return out
}

// gitNames and gitPrefixes are git's allow-list.
var (
	gitNames = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "LANG": true, "LANGUAGE": true,
		"TZ": true, "TMPDIR": true, "TEMP": true, "TMP": true, "SSH_AUTH_SOCK": true,
		// Windows
		"SYSTEMROOT": true, "WINDIR": true, "COMSPEC": true, "PATHEXT": true, "USERPROFILE": true, "APPDATA": true,
		"LOCALAPPDATA": true, "PROGRAMDATA": true, "PROGRAMFILES": true, "HOMEDRIVE": true, "HOMEPATH": true}
	gitPrefixes = []string{"GIT_", "LC_", "XDG_"}
)

func allowed(c Child, name string) bool {
	if runtime.GOOS == "windows" {
		name = strings.ToUpper(name) // Path, SystemRoot
	}
	switch {
	case strings.HasPrefix(name, "DEPLOYER_SECRETS_"), sensitive.IsCIToken(name):
		return false
	case name == "PULUMI_CONFIG_PASSPHRASE", name == "PULUMI_CONFIG_PASSPHRASE_FILE":
		return c == PulumiCLI
	case c == Git:
		if gitNames[name] {
			return true
		}
		for _, p := range gitPrefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	return true
}

// environ is what a Cmd whose Env was left nil starts from: deployer's
// environment under the rule of user commands, so no child inherits key
// material by omission.
func environ() []string { return Environ(UserCommand, os.Environ()) }

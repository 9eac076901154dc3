package proc

import (
	"os"
	"runtime"
	"strings"
)

// Env is deployer's environment as it was when the process started, kept in
// memory after Protect removed its secrets from the process's own
// environment.
type Env struct {
	vars   []string
	byName map[string]string
}

// Getenv returns the value of the variable name ("" when unset).
func (e *Env) Getenv(name string) string { return e.byName[envKey(name)] }

// Environ returns a copy of the environment, "NAME=value" entries.
func (e *Env) Environ() []string { return append([]string(nil), e.vars...) }

func envKey(name string) string {
	if runtime.GOOS == "windows" {
		return strings.ToUpper(name)
	}
	return name
}

// Protect keeps deployer's secrets out of reach of the processes it starts
// (docs/secrets.md#what-children-get) and returns the environment as it was,
// for deployer to read from memory. Call it once, first thing in main:
//
//   - the variables no child gets (DEPLOYER_SECRETS_*, the CI's tokens)
//     are removed from the process's environment (os.Unsetenv);
//   - on Linux, the values of every variable a user command does not get
//     (those, and PULUMI_CONFIG_PASSPHRASE) are overwritten with zero bytes
//     in the environment block the process started with, which is what
//     /proc/PID/environ shows (os.Unsetenv does not touch it), and the
//     process is made non-dumpable (prctl PR_SET_DUMPABLE 0), so another
//     process of the same user cannot read its memory, environ or file
//     descriptors through /proc or attach a debugger to it.
//
// Elsewhere only the first applies. A failure of the Linux steps is
// returned, with the environment: the caller goes on (the children still
// get no withheld variable, proc.Environ) and may report it.
func Protect() (*Env, error) {
	e := &Env{vars: os.Environ(), byName: map[string]string{}}
	for _, kv := range e.vars {
		name, v, _ := strings.Cut(kv, "=")
		e.byName[envKey(name)] = v
		if !allowed(PulumiCLI, name) {
			os.Unsetenv(name)
		}
	}
	err := hideInitialEnviron(func(name string) bool { return !allowed(UserCommand, name) })
	if nerr := setNotDumpable(); err == nil {
		err = nerr
	}
	return e, err
}

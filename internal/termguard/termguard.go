// Package termguard keeps deployer from querying the terminal while the
// program initialises.
//
// A dependency of the Pulumi SDK (bubbletea v1) asks the terminal for its
// background colour from a package init function: it writes ESC]11;? to
// stdout and waits up to 5 s for an answer, which terminals such as
// `script`, `docker run -t` and some CI runners never send; the bytes it
// reads meanwhile are typed-ahead input lost. deployer never needs that
// answer (its colours are fixed ANSI colours, see docs/design.md#output).
//
// Go initialises packages in import-path order among those whose imports
// are ready (the Go spec, "Package initialization"); this package imports
// only os, and sorts before github.com/muesli/termenv, which the query
// needs, so its init runs first. It sets TERM=dumb, which makes termenv
// skip the query, and Restore puts the user's TERM back as the first thing
// main does, before any command runs or any child process is started.
package termguard

import "os"

var (
	savedTerm string
	hadTerm   bool
	guarded   bool
)

func init() {
	savedTerm, hadTerm = os.LookupEnv("TERM")
	if os.Setenv("TERM", "dumb") == nil {
		guarded = true
	}
}

// Restore puts back the TERM variable deployer was started with. main calls
// it once, first.
func Restore() {
	if !guarded {
		return
	}
	guarded = false
	if hadTerm {
		_ = os.Setenv("TERM", savedTerm)
	} else {
		_ = os.Unsetenv("TERM")
	}
}

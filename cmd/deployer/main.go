// Command deployer deploys infrastructure stacks safely. main wires the root
// command, signals and exit codes (docs/exit-codes.md); nothing else.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/cli"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/proc"
	"github.com/deployer-dev/deployer/internal/termguard"
	"github.com/deployer-dev/deployer/internal/termui"
)

// secondSignalGrace is how long deployer still waits, after a second
// Ctrl-C killed the engines, for the state save and the lock release.
const secondSignalGrace = 30 * time.Second

func main() {
	termguard.Restore()
	os.Exit(run())
}

// protectEnvironment makes f read the environment from memory: the
// variables no child may get are gone from the process's own environment,
// and on Linux from what /proc/PID/environ shows
// (docs/secrets.md#what-children-get). Protect does what it can; the
// children's environments do not depend on it.
func protectEnvironment(f *app.Factory) {
	env, _ := proc.Protect()
	f.Getenv, f.Environ = env.Getenv, env.Environ
}

func run() int {
	// A closed stdout or stderr (`deployer deploy | head -1`) must not kill
	// deployer with SIGPIPE between its apply and its state write: with the
	// signal notified, writes fail with EPIPE instead, and IOStreams drops
	// them. Children still start with SIGPIPE's default action.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// The Factory builds the commands; the Session behind it is what this
	// process opened, which only the signal handling below reads.
	f, s := app.NewSession(termui.System())
	defer f.Close()
	protectEnvironment(f)

	// The first SIGINT/SIGTERM cancels the running command cleanly (the
	// deployment is recorded as cancelled and the lock released). A second
	// one kills the engines' processes at once; the command then still saves
	// what was done and releases its lock, for up to secondSignalGrace, and a
	// third signal exits at once (docs/exit-codes.md).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		if s.HoldsLeases() {
			fmt.Fprintln(os.Stderr, "\ndeployer: cancelling; the lock is released when the running step stops (signal again to stop at once)")
		} else {
			fmt.Fprintln(os.Stderr, "\ndeployer: cancelling")
		}
		cancel()
		go exitWhenNoLease(s)
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(os.Stderr, "\ndeployer: stopping the engines now; saving what was done and releasing the lock (signal again to exit at once)")
		s.KillEngines()
		select {
		case <-done:
		case <-sigs:
			os.Exit(exitcode.Cancelled)
		case <-time.After(secondSignalGrace):
			fmt.Fprintln(os.Stderr, "deployer: gave up waiting for the state save and lock release")
			os.Exit(exitcode.Cancelled)
		}
	}()
	cmd, err := s.Execute(ctx, cli.NewRootCmd(f))
	if err == nil {
		return exitcode.OK
	}
	code := exitCode(err)
	var ec *exitcode.ExitCodeError
	if errors.As(err, &ec) {
		return code
	}
	defer s.ReportError(err) // GitHub Actions: ::error and the held-lock summary
	// Errors go through f.IO.ErrOut, which masks known secret values.
	if f.JSON {
		_ = json.NewEncoder(f.IO.ErrOut).Encode(termui.ErrorJSON(err, code))
	} else {
		fmt.Fprintln(f.IO.ErrOut, "Error: "+termui.Remedy(err))
		if code == exitcode.Usage && isCobraUsage(err) {
			fmt.Fprintln(f.IO.ErrOut, usageHint(cmd))
		}
	}
	return code
}

// exitWhenNoLease ends a cancelled process that holds no lock within about
// a second (exit 130), even when it is busy with local work that does not
// watch its context (parsing a large file, building a plan): with no lease
// there is nothing to release or record. A process holding a lease keeps
// to the graceful path, which releases it (docs/exit-codes.md).
func exitWhenNoLease(s *app.Session) {
	const (
		tick    = 50 * time.Millisecond
		grace   = 400 * time.Millisecond // from the signal: let a quick command finish on its own
		settled = 200 * time.Millisecond // no lease for this long: a release's messages are out
	)
	start, free := time.Now(), time.Duration(0)
	for {
		time.Sleep(tick)
		if s.HoldsLeases() || s.Stacking() {
			free = 0
			continue
		}
		free += tick
		if time.Since(start) >= grace && free >= settled {
			s.KillEngines()
			os.Exit(exitcode.Cancelled)
		}
	}
}

// exitCode maps err to its exit code (docs/exit-codes.md): the code a
// command asked for, else the one its errors carry (exitcode.Of), else 2 for
// cobra's own usage errors.
func exitCode(err error) int {
	var ec *exitcode.ExitCodeError
	if errors.As(err, &ec) {
		return ec.Code
	}
	code := exitcode.Of(err)
	if code == exitcode.Error && isCobraUsage(err) {
		return exitcode.Usage
	}
	return code
}

// usageHint points to the help of the command whose flags or arguments
// were wrong (the subcommand's, not the root's).
func usageHint(cmd *cobra.Command) string {
	path := "deployer"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	return fmt.Sprintf("Run '%s --help' for usage.", path)
}

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "bad flag syntax", "required flag", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

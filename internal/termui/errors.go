package termui

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Remedy returns err's message with what to do next added where the CLI
// knows better than the layer that failed (Terraform's
// LockErrorMessage): a held lock prints the holder's record and the exact
// unlock command.
//
// An error that knows its cause and fix in one sentence (a missing table,
// bucket or schema: a Fix method) leads the message, and the context it was
// found in follows in parentheses.
//
// The message passes through sanitize.Text: an error quotes data (a config
// key, a lock's holder, a command) that must not drive the terminal or
// write a workflow command (docs/secrets.md#printed-data-is-sanitised).
func Remedy(err error) string { return sanitize.Text(remedy(err)) }

func remedy(err error) string {
	var held *lockmgr.HeldError
	if errors.As(err, &held) {
		rec := held.Record
		var b bytes.Buffer
		if held.Waited > 0 {
			fmt.Fprintf(&b, "lock %s is still held after waiting %s (--lock-timeout); another operation is in progress:\n", rec.LockKey, roundWaited(held.Waited))
		} else {
			fmt.Fprintf(&b, "lock %s is held; another operation is in progress:\n", rec.LockKey)
		}
		PrintRecord(&b, heldStatus(held))
		wait := "Wait for it with --lock-timeout DUR (e.g. --lock-timeout 10m)."
		if held.Waited > 0 {
			wait = "Wait longer with a larger --lock-timeout."
		}
		fmt.Fprintf(&b, "\n%s If the holder is gone, break the lock with:\n  %s", wait, UnlockCommand(rec))
		return b.String()
	}
	var sum *statestore.ChecksumError
	var hinted *toldError
	if errors.As(err, &sum) && !errors.As(err, &hinted) {
		return err.Error() + "\n" + restoreHint(sum.Stack, sum.Env)
	}
	var fx interface {
		error
		Fix() string
	}
	if errors.As(err, &fx) {
		context := strings.TrimSuffix(strings.TrimSuffix(err.Error(), fx.Error()), ": ")
		if cause := errors.Unwrap(fx); cause != nil && strings.HasSuffix(fx.Error(), cause.Error()) {
			context = strings.TrimPrefix(context+": "+cause.Error(), ": ")
		}
		if context == "" {
			return fx.Fix()
		}
		return fx.Fix() + "\n  (" + context + ")"
	}
	return err.Error()
}

// ErrorJSON is the JSON object an error becomes on stderr under --json
// (docs/exit-codes.md): {"error", "exit_code"}, and for a held lock the
// holder's record ("lock", as `state locks --json` shows it) and the exact
// "unlock_command".
func ErrorJSON(err error, code int) map[string]any {
	out := map[string]any{"error": err.Error(), "exit_code": code}
	var held *lockmgr.HeldError
	if errors.As(err, &held) {
		out["lock"] = toLockJSON(heldStatus(held))
		out["unlock_command"] = UnlockCommand(held.Record)
	}
	return out
}

// heldStatus is the holder's record with the verdict the Manager gave it
// (its clock and the configured stale_after). A HeldError straight from a
// backend has none: the record is shown without verdict and ages.
func heldStatus(held *lockmgr.HeldError) lockmgr.Status {
	if held.Status != nil {
		return *held.Status
	}
	pk, _ := lockmgr.ParseKey(held.Record.LockKey)
	return lockmgr.Status{Record: held.Record, Level: pk.Level, HolderGone: lockmgr.HolderGone(held.Record)}
}

// UnlockCommand is the exact command that breaks rec, shell-quoted
// (sanitize.Command): the record's key and lock id are data, and the
// command is pasted into a shell.
func UnlockCommand(rec lockmgr.Record) string {
	pk, ok := lockmgr.ParseKey(rec.LockKey)
	if !ok || pk.Level == lockmgr.LevelCustom {
		return sanitize.Command("deployer", "unlock", "--key", pk.Name, "--force", "--lock-id", rec.LockID)
	}
	args := []string{"deployer", "unlock", "-s", pk.Stack, "-e", pk.Env}
	switch pk.Level {
	case lockmgr.LevelService:
		args = append(args, "--service", pk.Service)
	case lockmgr.LevelComponent:
		args = append(args, "--component", pk.Service+"/"+pk.Component)
	}
	return sanitize.Command(append(args, "--force", "--lock-id", rec.LockID)...)
}

// toldError is an error whose message already says what to do about it
// (Told): Remedy adds no hint of its own.
type toldError struct {
	err  error
	what string
}

// Told returns err followed, on a line of its own, by what to do.
func Told(err error, what string) error { return &toldError{err: err, what: what} }

func (e *toldError) Error() string { return e.err.Error() + "\n" + e.what }
func (e *toldError) Unwrap() error { return e.err }

// restoreHint is what to do about the state of stack/env that failed
// verification (docs/exit-codes.md): nothing was written; find an intact
// snapshot with history and restore it. Without a stack (a state file
// read by state push) it names -e ENV.
func restoreHint(stack, env string) string {
	target := "-e ENV"
	if stack != "" && env != "" {
		target = "-s " + stack + " -e " + env
	}
	return fmt.Sprintf("Nothing was written. Find the last intact serial with `deployer history %s`, then roll the state back to it with `deployer restore %s --serial N` (docs/state-format.md#history-snapshots).", target, target)
}

// roundWaited rounds a wait to whole seconds, or to 10 ms below a second.
func roundWaited(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Second)
}

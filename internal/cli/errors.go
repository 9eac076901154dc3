package cli

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Remedy returns err's message with what to do next added where the CLI
// knows better than the layer that failed (Terraform's
// LockErrorMessage): a held lock prints the holder's record and the exact
// unlock command.
func Remedy(err error) string {
	var held *lockmgr.HeldError
	if errors.As(err, &held) {
		rec := held.Record
		var b bytes.Buffer
		fmt.Fprintf(&b, "lock %s is held; another operation is in progress:\n", rec.LockKey)
		printRecord(&b, heldStatus(held))
		fmt.Fprintf(&b, "\nWait for it with --lock-timeout DUR (e.g. --lock-timeout 10m). If the holder is gone, break the lock with:\n  %s",
			unlockCommand(rec))
		return b.String()
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
		out["unlock_command"] = unlockCommand(held.Record)
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

// unlockCommand is the exact command that breaks rec.
func unlockCommand(rec lockmgr.Record) string {
	pk, ok := lockmgr.ParseKey(rec.LockKey)
	if !ok || pk.Level == lockmgr.LevelCustom {
		return fmt.Sprintf("deployer unlock --key %s --force --lock-id %s", pk.Name, rec.LockID)
	}
	cmd := fmt.Sprintf("deployer unlock -s %s -e %s", pk.Stack, pk.Env)
	switch pk.Level {
	case lockmgr.LevelService:
		cmd += " --service " + pk.Service
	case lockmgr.LevelComponent:
		cmd += " --component " + pk.Service + "/" + pk.Component
	}
	return cmd + " --force --lock-id " + rec.LockID
}

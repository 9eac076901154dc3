package statestore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deployer-dev/deployer/internal/exitcode"
)

// Version is an opaque token naming one stored revision of state.json (an S3
// ETag, a content digest, a row version). The empty Version means "no state yet".
type Version string

// LockRef identifies the lease under which a write is made. Backends that can
// check it atomically with the write (PostgreSQL) do; the others rely
// on compare-and-swap of Version.
type LockRef struct {
	Key    string
	LockID string
	Fence  int64
}

// WriteRequest is one state write: the history snapshot first, then state.json
// by compare-and-swap on Prev (docs/state-format.md#serial-lineage-and-compare-and-swap).
type WriteRequest struct {
	Stack, Env   string
	Serial       int64
	Lineage      string
	Time         time.Time // snapshot time, names the history object
	Document     []byte    // the complete, checksummed state.json bytes
	Prev         Version   // "" = state.json must not exist yet
	DeploymentID string
	Lock         *LockRef // nil when written without a lock
}

// SnapshotInfo names one history snapshot.
type SnapshotInfo struct {
	Serial int64
	Time   time.Time
	Name   string // e.g. "2024-01-15T14-20-00.000Z-12.json"
	// Uncommitted: the snapshot never became state.json (its write failed or
	// crashed between the two): set by Store.History, never by a Backend
	// (docs/state-format.md#history-snapshots).
	Uncommitted bool
}

// Backend stores state documents as bytes. It knows nothing of checksums,
// serials or lineage: Store enforces those once, above every backend (docs/design.md#state-writes).
type Backend interface {
	// Read returns state.json of stack/env and its Version; ErrNotFound if none;
	// *TooLargeError, before reading it whole, when it is over ReadLimit(ctx).
	Read(ctx context.Context, stack, env string) ([]byte, Version, error)
	// Write stores the history snapshot, then state.json iff the current
	// Version equals req.Prev (or none exists when Prev is ""). It returns the
	// new Version; *ConflictError when Prev is stale; an error wrapping
	// ErrLeaseLost when the backend checks req.Lock and it is no longer live.
	Write(ctx context.Context, req WriteRequest) (Version, error)
	// ListSnapshots lists the history snapshots of stack/env as stored, in
	// any order, every one of them: also any whose state.json write never
	// completed, and every snapshot of a serial written more than once. Store
	// orders, limits and marks them (docs/state-format.md#history-snapshots).
	// No state gives an empty list.
	ListSnapshots(ctx context.Context, stack, env string) ([]SnapshotInfo, error)
	// ReadSnapshot returns the bytes of the snapshot sn, as ListSnapshots
	// listed it; ErrNotFound (wrapped) if it is not there; *TooLargeError, as
	// Read, over ReadLimit(ctx).
	ReadSnapshot(ctx context.Context, stack, env string, sn SnapshotInfo) ([]byte, error)
	// Location describes where the state of stack/env lives, for messages
	// (".deployer/stacks/s/e/state.json", "s3://b/stacks/s/e/state.json").
	Location(stack, env string) string
	Close() error
}

// Errors returned by backends and Store.
var (
	ErrNotFound  = errors.New("state not found")
	ErrLeaseLost = exitcode.New(exitcode.State, "lease no longer held")
)

// ConflictError: the stored state moved on since it was read (CAS lost), or the
// write breaks the serial/lineage rules. Exit code 4.
type ConflictError struct {
	Location string
	Reason   string // "state was written by someone else since it was read", ...
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("state conflict on %s: %s", e.Location, e.Reason)
}

// ChecksumError: a loaded document's digest does not match its checksums block
// (or it does not parse). Exit code 4.
type ChecksumError struct {
	Location string
	// Stack and Env name the state that failed verification, when a Store
	// loaded it ("" for a document read from a file, as state push reads
	// one): the restore the CLI suggests names them.
	Stack, Env string
	Field      string // "resources" | "outputs" | "document"
	Stored     string // digest written in the file
	Computed   string // digest of the content read
	Detail     string
}

func (e *ChecksumError) Error() string {
	if e.Field == "document" {
		return fmt.Sprintf("state %s is corrupt: %s", e.Location, e.Detail)
	}
	return fmt.Sprintf("state %s failed verification: checksum of %s is %s but the file records %s",
		e.Location, e.Field, e.Computed, e.Stored)
}

// DeployerExitCode is 4 (docs/exit-codes.md).
func (e *ConflictError) DeployerExitCode() int { return exitcode.State }

// DeployerExitCode is 4 (docs/exit-codes.md).
func (e *ChecksumError) DeployerExitCode() int { return exitcode.State }

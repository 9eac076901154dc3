package lockmgr

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/sanitize"
)

// Level is the scope a lock covers (docs/design.md#lock-keys).
type Level string

const (
	LevelStack     Level = "stack"
	LevelService   Level = "service"
	LevelComponent Level = "component"
	LevelCustom    Level = "custom" // deployer lock exec --key NAME
)

// Record is the lock record of docs/design.md#lock-record (the DynamoDB item), with the same
// attribute names in every backend's JSON, plus Fence. Times are epoch seconds.
type Record struct {
	LockKey       string   `json:"lockKey"`
	LockID        string   `json:"lockId"`   // UUID, unique per acquisition
	LockedBy      string   `json:"lockedBy"` // github-actions-run-{id} or {user}@{host}
	LockedAt      int64    `json:"lockedAt"` // epoch seconds
	ExpiresAt     int64    `json:"expiresAt"`
	LastHeartbeat int64    `json:"lastHeartbeat"`
	Metadata      Metadata `json:"metadata"`
	Fence         int64    `json:"fence"` // grows with every acquisition of LockKey
}

// Metadata describes the holder (docs/design.md#lock-record plus operation; command for lock exec).
type Metadata struct {
	User         string    `json:"user,omitempty"`
	CISystem     string    `json:"ci_system,omitempty"`
	CIRunID      string    `json:"ci_run_id,omitempty"`
	DeploymentID string    `json:"deployment_id,omitempty"`
	GitCommit    string    `json:"git_commit,omitempty"`
	GitBranch    string    `json:"git_branch,omitempty"`
	Hostname     string    `json:"hostname,omitempty"`
	PID          int       `json:"pid,omitempty"`
	Operation    Operation `json:"operation,omitempty"` // why the lock is held
	Command      string    `json:"command,omitempty"`   // lock exec: the command line
}

// Operation is why a lock is held: the use case that took it, written to
// the record's metadata.operation (docs/design.md#lock-record lists them).
type Operation string

// The operations of docs/design.md#lock-record.
const (
	OpDeploy        Operation = "deploy"         // deployer deploy
	OpDestroy       Operation = "destroy"        // deployer destroy
	OpRestore       Operation = "restore"        // deployer restore
	OpStatePush     Operation = "state-push"     // deployer state push
	OpStateRm       Operation = "state-rm"       // deployer state rm
	OpStateMove     Operation = "state-mv"       // deployer state mv
	OpRefresh       Operation = "refresh"        // deployer deploy --refresh-only
	OpImport        Operation = "import"         // deployer import
	OpRotateSecrets Operation = "rotate-secrets" // deployer secrets rotate
	OpUnlock        Operation = "unlock"         // unlock --force recording the broken holder's deployment as abandoned
	OpExec          Operation = "exec"           // deployer lock exec; metadata.command names the command
	OpGuard         Operation = "guard"          // deployer guard stop; metadata.command names the stop
	OpQueue         Operation = "queue"          // the wait queue's ticket dispenser (docs/locking.md#wait-queue)
)

// Expired reports whether the record is free for takeover at now: expiresAt < now
// in epoch seconds, the condition of the original DynamoDB PutItem.
func (r Record) Expired(now time.Time) bool { return r.ExpiresAt < now.Unix() }

// Sentinel errors returned by backends and the Manager.
var (
	// ErrNotFound: no record under the key.
	ErrNotFound = errors.New("lock not found")
	// ErrLockLost: the record is gone or belongs to another lockId.
	ErrLockLost = exitcode.New(exitcode.LockHeld, "lock lost: released or taken over by another holder")
)

// HeldError is returned when a live record holds the key (or a conflicting key
// of the hierarchy). Record is the holder's record.
type HeldError struct {
	Record Record
	// Status is the Manager's view of Record when Acquire gave up: its
	// verdict with the configured stale_after and its ages at the Manager's
	// clock (docs/locking.md#verdicts-state-locks). Nil when a Backend
	// returns the error.
	Status *Status
	// Waited is how long Acquire waited for the lock before it gave up
	// (--lock-timeout); 0 when it did not wait.
	Waited time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lock %q is held by %s (lock id %s, since %s)", e.Record.LockKey,
		e.Record.LockedBy, e.Record.LockID, time.Unix(e.Record.LockedAt, 0).UTC().Format(time.RFC3339))
}

// Key formats (docs/design.md#lock-keys, normative).

// StackKey returns "stack:{stack}:env:{env}".
func StackKey(stack, env string) string { return StackPrefix(stack) + env }

// StackPrefix returns "stack:{stack}:env:", the prefix of every lock key of
// stack (its environments, services and components).
func StackPrefix(stack string) string { return "stack:" + stack + ":env:" }

// ServiceKey returns "stack:{stack}:env:{env}:service:{service}".
func ServiceKey(stack, env, service string) string {
	return StackKey(stack, env) + ":service:" + service
}

// ComponentKey returns "stack:{stack}:env:{env}:component:{service}/{component}".
func ComponentKey(stack, env, service, component string) string {
	return StackKey(stack, env) + ":component:" + service + "/" + component
}

// CustomKey returns "custom:{name}" (deployer lock exec).
func CustomKey(name string) string { return "custom:" + name }

// ParsedKey is a lock key split into its parts.
type ParsedKey struct {
	Level     Level
	Stack     string
	Env       string
	Service   string
	Component string // component name without service
	Name      string // custom
}

// ParseKey splits a key of one of the four formats; ok is false otherwise.
func ParseKey(key string) (ParsedKey, bool) {
	if name, ok := strings.CutPrefix(key, "custom:"); ok {
		return ParsedKey{Level: LevelCustom, Name: name}, name != ""
	}
	parts := strings.Split(key, ":")
	if len(parts) < 4 || parts[0] != "stack" || parts[2] != "env" {
		return ParsedKey{}, false
	}
	p := ParsedKey{Stack: parts[1], Env: parts[3]}
	switch {
	case len(parts) == 4:
		p.Level = LevelStack
	case len(parts) == 6 && parts[4] == "service":
		p.Level, p.Service = LevelService, parts[5]
	case len(parts) == 6 && parts[4] == "component":
		svc, comp, ok := strings.Cut(parts[5], "/")
		if !ok {
			return ParsedKey{}, false
		}
		p.Level, p.Service, p.Component = LevelComponent, svc, comp
	default:
		return ParsedKey{}, false
	}
	return p, true
}

// Conflicts reports whether two keys may not be held at once: the same key, or
// one is an ancestor of the other in one stack/environment (docs/locking.md#keys-and-levels).
func Conflicts(a, b string) bool {
	if a == b {
		return true
	}
	pa, oka := ParseKey(a)
	pb, okb := ParseKey(b)
	if !oka || !okb || pa.Level == LevelCustom || pb.Level == LevelCustom {
		return false
	}
	if pa.Stack != pb.Stack || pa.Env != pb.Env {
		return false
	}
	if pa.Level == LevelStack || pb.Level == LevelStack {
		return true
	}
	if pa.Service != pb.Service {
		return false
	}
	// same service: service vs anything conflicts; component vs component only if equal (handled above)
	return pa.Level == LevelService || pb.Level == LevelService
}

// Printable returns r with every text field passed through sanitize.Line:
// a record is read from a backend anyone with write access to it can
// plant, so its holder, host, operation or command must not drive a
// terminal or write a workflow command (docs/secrets.md#printed-data-is-sanitised).
// Every view of a record (state locks, the held-lock error, waits, the job
// summary) shows this copy; JSON output shows the record as stored.
func (r Record) Printable() Record {
	r.LockKey, r.LockID, r.LockedBy = sanitize.Line(r.LockKey), sanitize.Line(r.LockID), sanitize.Line(r.LockedBy)
	m := &r.Metadata
	for _, f := range []*string{&m.User, &m.CISystem, &m.CIRunID, &m.DeploymentID, &m.GitCommit, &m.GitBranch, &m.Hostname, &m.Command} {
		*f = sanitize.Line(*f)
	}
	m.Operation = Operation(sanitize.Line(string(m.Operation)))
	return r
}

// DeployerExitCode is 3 (docs/exit-codes.md).
func (e *HeldError) DeployerExitCode() int { return exitcode.LockHeld }

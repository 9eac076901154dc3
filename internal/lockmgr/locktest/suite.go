package locktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Run checks newBackend's store against the lockmgr.Backend contract and runs
// the Manager on top of it. Every call of newBackend must return an
// independent client (its own connection, file handles, caches) of the same
// store, so two calls behave like two processes. Run closes each client with
// t.Cleanup. Keys are unique per test, so the store may be shared and reused.
func Run(t *testing.T, newBackend func(t *testing.T) lockmgr.Backend) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s *suite)
	}{
		{"AcquireFreeKey", testAcquireFree},
		{"HeldKeyGivesHolderRecord", testHeld},
		{"ReleaseThenReacquire", testReleaseReacquire},
		{"FenceGrowsAcrossReleaseAndExpiry", testFence},
		{"ExpiredRecordIsTakenOver", testExpiredTakeover},
		{"WrongLockIDIsRefused", testWrongLockID},
		{"HeartbeatExtends", testHeartbeat},
		{"StaleHolderCannotReleaseNewHolder", testStaleHolder},
		{"GetNotFound", testGetNotFound},
		{"ListByPrefix", testList},
		{"RacingClientsExactlyOneWins", testRace},
		{"CancelledContext", testCancelled},
		{"Manager/Hierarchy", testManagerHierarchy},
		{"Manager/NoConflictingHoldersUnderContention", testManagerMutualExclusion},
		{"Manager/LeaseContextCancelledWhenForceUnlocked", testManagerLeaseLost},
		{"Manager/TimeoutWaitsForRelease", testManagerWaits},
		{"Manager/MaxRetriesAndKeep", testManagerRetriesAndKeep},
		{"Manager/ClockSkewRefused", testManagerClockSkew},
		{"Queue/WaitersAcquireInArrivalOrder", testQueueOrder},
		{"Queue/DeadWaiterSkippedAfterExpiry", testQueueDeadWaiterSkipped},
		{"Queue/TimedOutWaiterLeaves", testQueueTimedOutWaiterLeaves},
		{"Queue/StormIsExclusiveAndFair", testStorm},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newSuite(t, newBackend))
		})
	}
}

// suite is one test's view of the store: fresh keys and a way to open clients.
type suite struct {
	t          *testing.T
	newBackend func(t *testing.T) lockmgr.Backend
	stack, env string
	now        time.Time // logical clock of records written by the test
}

func newSuite(t *testing.T, nb func(t *testing.T) lockmgr.Backend) *suite {
	return &suite{t: t, newBackend: nb, stack: uniqueName(t), env: "e", now: time.Now().Truncate(time.Second)}
}

// client opens an independent client of the store, closed when the test ends.
func (s *suite) client() lockmgr.Backend {
	s.t.Helper()
	b := s.newBackend(s.t)
	s.t.Cleanup(func() {
		if err := b.Close(); err != nil {
			s.t.Errorf("close backend: %v", err)
		}
	})
	return b
}

func (s *suite) stackKey() string { return lockmgr.StackKey(s.stack, s.env) }

func (s *suite) componentKey(svc, comp string) string {
	return lockmgr.ComponentKey(s.stack, s.env, svc, comp)
}

// record returns a record of key locked at lockedAt for ttl, with every field
// of docs/design.md#lock-record set, so a backend that drops one is caught.
func (s *suite) record(key, by string, lockedAt time.Time, ttl time.Duration) lockmgr.Record {
	return lockmgr.Record{
		LockKey:       key,
		LockID:        uuid.NewString(),
		LockedBy:      by,
		LockedAt:      lockedAt.Unix(),
		ExpiresAt:     lockedAt.Add(ttl).Unix(),
		LastHeartbeat: lockedAt.Unix(),
		Metadata: lockmgr.Metadata{
			User: "alice@company.com", CISystem: "github-actions", CIRunID: "12345",
			DeploymentID: "dep-abc123def456", GitCommit: "a1b2c3d4e5f6", GitBranch: "main",
			Hostname: "runner-abc123", PID: 54321, Operation: "deploy", Command: "make deploy",
		},
	}
}

// acquire takes key on b at s.now for an hour and checks the result.
func (s *suite) acquire(b lockmgr.Backend, key, by string) lockmgr.Record {
	s.t.Helper()
	return s.acquireRec(b, s.record(key, by, s.now, time.Hour))
}

func (s *suite) acquireRec(b lockmgr.Backend, want lockmgr.Record) lockmgr.Record {
	s.t.Helper()
	got, err := b.TryAcquire(context.Background(), want)
	if err != nil {
		s.t.Fatalf("TryAcquire(%s) by %s: %v", want.LockKey, want.LockedBy, err)
	}
	if got.Fence <= 0 {
		s.t.Errorf("TryAcquire(%s) fence = %d, want > 0", want.LockKey, got.Fence)
	}
	want.Fence = got.Fence
	if d := cmp.Diff(want, got); d != "" {
		s.t.Errorf("TryAcquire(%s) returned record differs from the one written (-want +got):\n%s", want.LockKey, d)
	}
	return got
}

// wantRecord checks that Get(key) on b returns want exactly.
func (s *suite) wantRecord(b lockmgr.Backend, want lockmgr.Record) {
	s.t.Helper()
	got, err := b.Get(context.Background(), want.LockKey)
	if err != nil {
		s.t.Fatalf("Get(%s): %v", want.LockKey, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		s.t.Errorf("Get(%s) (-want +got):\n%s", want.LockKey, d)
	}
}

func (s *suite) wantNotFound(b lockmgr.Backend, key string) {
	s.t.Helper()
	rec, err := b.Get(context.Background(), key)
	if !errors.Is(err, lockmgr.ErrNotFound) {
		s.t.Errorf("Get(%s) = %+v, %v; want ErrNotFound", key, rec, err)
	}
}

// wantHeld checks that err is a *HeldError carrying holder.
func wantHeld(t *testing.T, err error, holder lockmgr.Record) {
	t.Helper()
	var held *lockmgr.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("error = %v, want *lockmgr.HeldError held by %s", err, holder.LockedBy)
	}
	if d := cmp.Diff(holder, held.Record); d != "" {
		t.Errorf("HeldError.Record is not the holder's record (-want +got):\n%s", d)
	}
}

// uniqueName returns a stack name valid under the pattern of docs/configuration.md#names, made of the
// test's name and a random suffix.
func uniqueName(t testing.TB) string {
	name := t.Name()
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	var sb strings.Builder
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	base := sb.String()
	if len(base) > 40 {
		base = base[:40]
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return "lt-" + strings.Trim(base, "-") + "-" + hex.EncodeToString(rnd[:])
}

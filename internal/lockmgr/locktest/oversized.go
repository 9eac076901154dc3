package locktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// Plant stores data as is, bypassing the backend, where the backend keeps
// the record of key (a file, an S3 object, a Redis value, a table row), as
// a broken or hostile writer could.
type Plant func(t *testing.T, key string, data []byte)

// RunOversized checks the backend against docs/locking.md, "Record size":
// a value over lockmgr.MaxRecordBytes planted at a lock key (and at a
// wait-queue key) is never read whole and never taken as free: Get,
// TryAcquire, List and the Manager's Acquire and Waiters fail with a
// *lockmgr.RecordTooLargeError that names the key and how to remove it,
// and the lock stays unacquired.
func RunOversized(t *testing.T, b lockmgr.Backend, plant Plant) {
	t.Helper()
	ctx := context.Background()
	s := newSuite(t, func(*testing.T) lockmgr.Backend { return b })
	key := s.stackKey()
	// Valid JSON of a lock record, 8 MiB: too large however it is stored.
	big := `{"lockKey":"` + key + `","lockId":"x","lockedBy":"mallory","lockedAt":1,"expiresAt":1,"lastHeartbeat":1,"metadata":{"command":"` +
		strings.Repeat("x", 8<<20) + `"},"fence":1}`
	plant(t, key, []byte(big))

	check := func(what string, err error) {
		t.Helper()
		var tl *lockmgr.RecordTooLargeError
		if !errors.As(err, &tl) {
			t.Fatalf("%s of an oversized record: want *lockmgr.RecordTooLargeError, got %v", what, err)
		}
		msg := err.Error()
		for _, want := range []string{key, "over the limit of 64 KiB", "counts as held", tl.Remove} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message %q does not say %q", what, msg, want)
			}
		}
		if tl.Remove == "" || tl.Size <= lockmgr.MaxRecordBytes {
			t.Errorf("%s: Remove %q, Size %d", what, tl.Remove, tl.Size)
		}
	}
	_, err := b.Get(ctx, key)
	check("Get", err)
	// A record that cannot be read is held, whatever it says (expiresAt 1).
	_, err = b.TryAcquire(ctx, s.record(key, "bob", s.now, time.Hour))
	check("TryAcquire", err)
	_, err = b.List(ctx, lockmgr.StackPrefix(s.stack))
	check("List", err)

	m := lockmgr.NewManager(b, lockmgr.Options{TTL: time.Minute})
	_, err = m.Acquire(ctx, lockmgr.Request{Key: key, Timeout: time.Hour})
	check("Manager.Acquire", err)
	_, err = m.Get(ctx, key)
	check("Manager.Get", err)

	// A waiter's record in the wait queue of another stack.
	w := newSuite(t, func(*testing.T) lockmgr.Backend { return b })
	wkey := "queue:" + w.stackKey() + "#0000000000000000001#" + w.stackKey()
	plant(t, wkey, []byte(strings.Replace(big, key, wkey, 1)))
	_, err = m.Waiters(ctx, lockmgr.StackPrefix(w.stack))
	var tl *lockmgr.RecordTooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), wkey) {
		t.Fatalf("Waiters with an oversized waiter record: want *lockmgr.RecordTooLargeError naming %s, got %v", wkey, err)
	}
}

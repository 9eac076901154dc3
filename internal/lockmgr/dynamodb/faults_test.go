package dynamodb_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/faulttest"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// A write whose reply is lost (the server applied it, the connection closed,
// the SDK retried) is recognised as ours by reading back: acquire, heartbeat
// and release each succeed once, and no ghost record stays behind
// (docs/locking.md, "Lost replies").
func TestLostRepliesAreOurs(t *testing.T) {
	_, table, o := awstest.NewTable(t)
	proxy := faulttest.NewReplyDropper(t, o.DynamoDBEndpoint)
	o.DynamoDBEndpoint = proxy.URL
	b := open(t, table, o)
	ctx := context.Background()
	key := lockmgr.CustomKey("lost-" + uuid.NewString()[:8])
	now := time.Now()
	rec := lockmgr.Record{LockKey: key, LockID: uuid.NewString(), LockedBy: "alice@laptop", LockedAt: now.Unix(),
		ExpiresAt: now.Add(time.Hour).Unix(), LastHeartbeat: now.Unix(), Metadata: lockmgr.Metadata{Operation: "exec"}}

	proxy.DropNext(faulttest.DynamoDB("UpdateItem", "ADD fence", rec.LockID))
	got, err := b.TryAcquire(ctx, rec)
	if err != nil {
		t.Fatalf("TryAcquire with its reply lost: %v (want our own record back)", err)
	}
	if got.LockID != rec.LockID || got.Fence != 1 {
		t.Errorf("TryAcquire with its reply lost = lockId %s fence %d, want ours (%s) with fence 1", got.LockID, got.Fence, rec.LockID)
	}

	proxy.DropNext(faulttest.DynamoDB("UpdateItem", "SET lastHeartbeat"))
	at := now.Add(30 * time.Second)
	if err := b.Heartbeat(ctx, key, rec.LockID, at, at.Add(time.Hour)); err != nil {
		t.Fatalf("Heartbeat with its reply lost: %v", err)
	}
	if cur, err := b.Get(ctx, key); err != nil || cur.LastHeartbeat != at.Unix() {
		t.Errorf("after the heartbeat: %+v, %v; want lastHeartbeat %d", cur, err, at.Unix())
	}

	proxy.DropNext(faulttest.DynamoDB("UpdateItem", "REMOVE lockId"))
	if err := b.Release(ctx, key, rec.LockID); err != nil {
		t.Fatalf("Release with its reply lost: %v (want our own release recognised)", err)
	}
	if cur, err := b.Get(ctx, key); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("after the release: %+v, %v; want ErrNotFound", cur, err)
	}
	if n := proxy.Armed(); n != 0 {
		t.Fatalf("%d faults never fired; dropped: %v", n, proxy.Dropped())
	}
	t.Logf("dropped replies: %v", proxy.Dropped())

	// A release that finds another holder's release is still reported.
	rec2 := rec
	rec2.LockID = uuid.NewString()
	if _, err := b.TryAcquire(ctx, rec2); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, key, rec2.LockID); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, key, rec2.LockID); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("second Release of one lease = %v, want ErrLockLost", err)
	}
}

// A holder cut off from DynamoDB while it heartbeats stops its work before its
// lease can expire, and the next holder takes over only after expiry
// (docs/locking.md, "Partitions").
func TestPartitionStopsTheHolderBeforeExpiry(t *testing.T) {
	_, table, direct := awstest.NewTable(t)
	proxy := faulttest.NewReplyDropper(t, direct.DynamoDBEndpoint)
	viaProxy := direct
	viaProxy.DynamoDBEndpoint = proxy.URL
	o := lockmgr.Options{TTL: 6 * time.Second, HeartbeatInterval: time.Second}
	holder := lockmgr.NewManager(open(t, table, viaProxy), o)
	key := lockmgr.CustomKey("partition-" + uuid.NewString()[:8])
	lease, err := holder.Acquire(context.Background(), lockmgr.Request{Key: key, LockedBy: "alice@laptop"})
	if err != nil {
		t.Fatal(err)
	}
	proxy.Partition(true)
	cut := time.Now()
	select {
	case <-lease.Context().Done():
	case <-time.After(2 * time.Minute): // only turns a hang into a failure
		t.Fatal("the lease context was never cancelled while the backend was unreachable")
	}
	stopped := time.Now()
	// Heartbeats may have renewed the lease up to the cut; the record read
	// back after healing says when it really expires.
	proxy.Partition(false)
	rec, err := open(t, table, direct).Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Unix(rec.ExpiresAt, 0)
	t.Logf("cut at %s, holder stopped %s later, %s before its lease expired", cut.Format(time.StampMilli),
		stopped.Sub(cut).Round(time.Millisecond), exp.Sub(stopped).Round(time.Millisecond))
	if !stopped.Before(exp) {
		t.Errorf("the holder stopped at %s, not before its lease expired at %s", stopped.Format(time.StampMilli), exp.Format(time.StampMilli))
	}
	if cause := context.Cause(lease.Context()); !errors.Is(cause, lockmgr.ErrLockLost) {
		t.Errorf("lease context cause = %v, want ErrLockLost", cause)
	}

	next := lockmgr.NewManager(open(t, table, direct), lockmgr.Options{MaxRetryInterval: 200 * time.Millisecond})
	l2, err := next.Acquire(context.Background(), lockmgr.Request{Key: key, LockedBy: "bob@desk", Timeout: time.Duration(math.MaxInt64)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l2.Release(context.Background()) }()
	if got := l2.Record(); got.LockedAt <= rec.ExpiresAt || got.Fence <= rec.Fence {
		t.Errorf("the next holder took over at %d (fence %d), want after the expiry %d (fence > %d)", got.LockedAt, got.Fence, rec.ExpiresAt, rec.Fence)
	}
	if err := lease.Release(context.Background()); !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("Release by the cut-off holder after the takeover = %v, want ErrLockLost", err)
	}
}

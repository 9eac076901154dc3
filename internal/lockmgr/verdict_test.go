package lockmgr_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
)

// Get, List and a HeldError from Acquire classify a record with the
// Manager's clock and its configured stale_after, not the default.
func TestVerdictsUseTheConfiguredStaleAfter(t *testing.T) {
	ctx := context.Background()
	b, err := filelock.New(filepath.Join(t.TempDir(), ".deployer"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := time.Unix(1700000000, 0)
	key := lockmgr.StackKey("shop", "dev")
	rec, err := b.TryAcquire(ctx, lockmgr.Record{LockKey: key, LockID: "L1", LockedBy: "ci@runner",
		LockedAt: now.Add(-time.Hour).Unix(), LastHeartbeat: now.Add(-90 * time.Second).Unix(), ExpiresAt: now.Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return now }
	for _, c := range []struct {
		staleAfter time.Duration
		want       lockmgr.Verdict
	}{
		{time.Minute, lockmgr.Stale},
		{0, lockmgr.Active}, // DefaultStaleAfter: 2m
		{5 * time.Minute, lockmgr.Active},
	} {
		m := lockmgr.NewManager(b, lockmgr.Options{StaleAfter: c.staleAfter, Now: clock})
		want := lockmgr.Status{Record: rec, Verdict: c.want, Level: lockmgr.LevelStack, Age: time.Hour, HeartbeatAge: 90 * time.Second}
		got, err := m.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("stale_after %s: Get (-want +got):\n%s", c.staleAfter, d)
		}
		list, err := m.List(ctx, lockmgr.StackPrefix("shop"))
		if err != nil || len(list) != 1 {
			t.Fatalf("List = %v, %v", list, err)
		}
		if d := cmp.Diff(want, list[0]); d != "" {
			t.Errorf("stale_after %s: List (-want +got):\n%s", c.staleAfter, d)
		}
		_, err = m.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: "me"})
		var held *lockmgr.HeldError
		if !errors.As(err, &held) || held.Status == nil {
			t.Fatalf("Acquire of a held lock = %v, want a *HeldError with the Manager's Status", err)
		}
		if d := cmp.Diff(want, *held.Status); d != "" {
			t.Errorf("stale_after %s: HeldError.Status (-want +got):\n%s", c.staleAfter, d)
		}
	}
	m := lockmgr.NewManager(b, lockmgr.Options{Now: clock})
	if _, err := m.Get(ctx, lockmgr.StackKey("shop", "prod")); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("Get of a free key = %v, want ErrNotFound", err)
	}
}

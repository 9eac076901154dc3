package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	lockpg "github.com/deployer-dev/deployer/internal/lockmgr/postgres"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/postgres"
)

func openLocks(tb testing.TB, url string) *lockpg.Backend {
	tb.Helper()
	b, err := lockpg.Open(context.Background(), url)
	if err != nil {
		tb.Fatalf("open postgres lock backend: %v", err)
	}
	tb.Cleanup(func() { _ = b.Close() })
	return b
}

// A holder paused past its TTL, whose lock was then taken over, cannot write
// the state (the coordinated update); the new holder can.
func TestTakenOverHolderCannotWrite(t *testing.T) {
	url := pgschematest.Migrated(t)
	locks := openLocks(t, url)
	now := time.Now()
	state := open(t, url, postgres.Options{CheckLock: true, Now: func() time.Time { return now }})
	ctx := context.Background()
	key := lockmgr.StackKey("shop", "prod")
	rec := func(by string, lockedAt time.Time) lockmgr.Record {
		return lockmgr.Record{LockKey: key, LockID: uuid.NewString(), LockedBy: by,
			LockedAt: lockedAt.Unix(), ExpiresAt: lockedAt.Add(time.Hour).Unix(), LastHeartbeat: lockedAt.Unix()}
	}
	writeUnder := func(l lockmgr.Record, serial int64, prev statestore.Version) (statestore.Version, error) {
		return state.Write(ctx, statestore.WriteRequest{Stack: "shop", Env: "prod", Serial: serial, Lineage: "L",
			Time: now, Document: doc(serial), Prev: prev, DeploymentID: l.LockedBy,
			Lock: &statestore.LockRef{Key: l.LockKey, LockID: l.LockID, Fence: l.Fence}})
	}

	paused, err := locks.TryAcquire(ctx, rec("paused@host", now.Add(-2*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	// Expired but not yet taken over: still refused.
	if _, err := writeUnder(paused, 1, ""); !errors.Is(err, statestore.ErrLeaseLost) {
		t.Fatalf("write under an expired lock = %v, want ErrLeaseLost", err)
	}
	next, err := locks.TryAcquire(ctx, rec("next@host", now))
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	v, err := writeUnder(next, 1, "")
	if err != nil {
		t.Fatalf("write by the new holder: %v", err)
	}
	if _, err := writeUnder(paused, 2, v); !errors.Is(err, statestore.ErrLeaseLost) {
		t.Fatalf("write by the taken-over holder = %v, want ErrLeaseLost", err)
	}
	got, gotV, err := state.Read(ctx, "shop", "prod")
	if err != nil || string(got) != string(doc(1)) || gotV != v {
		t.Errorf("state after the refused write = %q, %q, %v; want the new holder's serial 1", got, gotV, err)
	}
	// Without the option (lock elsewhere), only compare-and-swap guards the write.
	plain := open(t, url, postgres.Options{})
	if _, err := plain.Write(ctx, statestore.WriteRequest{Stack: "shop", Env: "prod", Serial: 2, Lineage: "L",
		Time: now, Document: doc(2), Prev: v, DeploymentID: "x",
		Lock: &statestore.LockRef{Key: key, LockID: paused.LockID}}); err != nil {
		t.Errorf("write without CheckLock = %v, want it to pass on compare-and-swap alone", err)
	}
}

// The consistency test through the PostgreSQL backends: 15 workers x
// 10 updates of one stack/environment, each Manager.Acquire -> Store.Load ->
// modify -> Store.Save under the lease -> Release. The serial advances by
// exactly 150, the history holds 150 consecutive serials with no gap, and no
// worker errs.
func TestConcurrentUpdatesUnderLock(t *testing.T) {
	const workers, updates = 15, 10
	url := pgschematest.Migrated(t)
	ctx := context.Background()
	store := statestore.New(open(t, url, postgres.Options{CheckLock: true}))
	m := lockmgr.NewManager(openLocks(t, url), lockmgr.Options{MaxRetryInterval: 20 * time.Millisecond})
	key := lockmgr.StackKey("shop", "prod")

	st := statestore.NewState("shop", "prod")
	st.Serial = 1
	if _, err := store.Save(ctx, st, statestore.Head{}, nil); err != nil {
		t.Fatalf("create state: %v", err)
	}
	errs := make(chan error, workers*updates)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for u := range updates {
				if err := update(ctx, m, store, key, fmt.Sprintf("worker-%d-%d", w, u)); err != nil {
					errs <- fmt.Errorf("worker %d update %d: %w", w, u, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	final, _, err := store.Load(ctx, "shop", "prod")
	if err != nil {
		t.Fatal(err)
	}
	if final.Serial != 1+workers*updates {
		t.Errorf("final serial = %d, want %d", final.Serial, 1+workers*updates)
	}
	if got := fmt.Sprint(final.Outputs["updates"]); got != strconv.Itoa(workers*updates) {
		t.Errorf("outputs.updates = %v, want %d: an update was lost", got, workers*updates)
	}
	hist, err := store.History(ctx, "shop", "prod", statestore.Head{Serial: final.Serial}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1+workers*updates {
		t.Fatalf("history holds %d events, want %d", len(hist), 1+workers*updates)
	}
	for i, h := range hist {
		if want := int64(len(hist) - i); h.Serial != want {
			t.Fatalf("history[%d] has serial %d, want %d (a gap or a duplicate)", i, h.Serial, want)
		}
	}
}

// update is one worker's critical section: lock, load, count one more
// update in the outputs, save under the lease, release.
func update(ctx context.Context, m *lockmgr.Manager, store *statestore.Store, key, id string) error {
	lease, err := m.Acquire(ctx, lockmgr.Request{Key: key, LockedBy: id, Timeout: 2 * time.Minute})
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	rec := lease.Record()
	st, head, err := store.Load(lease.Context(), "shop", "prod")
	if err == nil {
		n, _ := strconv.Atoi(fmt.Sprint(st.Outputs["updates"])) // a json.Number once loaded
		st.Outputs["updates"] = n + 1
		st.Serial++
		st.Metadata.DeploymentID = id
		_, err = store.Save(lease.Context(), st, head,
			&statestore.LockRef{Key: rec.LockKey, LockID: rec.LockID, Fence: rec.Fence})
	}
	if rerr := lease.Release(ctx); err == nil && rerr != nil {
		err = fmt.Errorf("release: %w", rerr)
	}
	return err
}

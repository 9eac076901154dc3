package stateops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// restored checks that shop/dev holds serial want, restored from from by
// the deployment id, with from's resources.
func (fx *timelineFixture) restored(res *RestoreResult, want, from int64) {
	fx.t.Helper()
	st, head, err := fx.store.Load(context.Background(), "shop", "dev")
	if err != nil {
		fx.t.Fatal(err)
	}
	d := st.DeploymentHistory[0]
	if head != res.Head || st.Serial != want || res.RestoredFrom != from || d.Type != "restore" || d.RestoredFrom != from ||
		d.Serial != want || d.DeploymentID != res.DeploymentID || res.State.Serial != want {
		fx.t.Fatalf("after the restore: serial %d, head %+v, entry %+v; result %+v; want serial %d restored from %d", st.Serial, head, d, res, want, from)
	}
	if got := fmt.Sprint(st.Resources["app/api"].DesiredConfig["serial"]); got != fmt.Sprint(from) {
		fx.t.Fatalf("restored resources hold serial %s, want those of serial %d", got, from)
	}
}

func TestRestoreBySerialWritesTheNextSerial(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	fx.deploy()
	fx.deploy()
	var shown RestorePreview
	res, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 1,
		Confirm: func(p RestorePreview) (bool, error) { shown = p; return true, nil }})
	if err != nil {
		t.Fatal(err)
	}
	fx.restored(res, 4, 1)
	if shown.Snapshot.Serial != 1 || shown.Info.Name != statestore.SnapshotName(at(1), 1) || shown.Info.Uncommitted ||
		shown.Current.Serial != 3 || shown.Serial != 4 {
		t.Errorf("preview %+v", shown)
	}
	// History stays append-only: four snapshots, the last a restore.
	h, err := fx.svc.History(context.Background(), HistoryRequest{Target: shopDev})
	if err != nil || len(h.Entries) != 4 || h.Entries[0].Type != "restore" || h.Entries[0].RestoredFrom != 1 {
		t.Fatalf("history after the restore: %+v, %v", h, err)
	}
	if _, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 9}); !errors.Is(err, statestore.ErrNotFound) ||
		!strings.Contains(err.Error(), "no snapshot with serial 9 in shop/dev: see deployer history") {
		t.Errorf("restore of a serial never written: %v", err)
	}
}

// The confirmation says whether the snapshot ever became state.json, by
// the same rule as history; declining writes nothing.
func TestRestorePreviewMarksAnUncommittedSnapshot(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	fx.crash(2, at(1).Add(time.Second))
	before, err := os.ReadFile(fx.statePath())
	if err != nil {
		t.Fatal(err)
	}
	for serial, uncommitted := range map[int64]bool{2: true, 1: false} {
		var shown RestorePreview
		_, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: serial,
			Confirm: func(p RestorePreview) (bool, error) { shown = p; return false, nil }})
		if !errors.Is(err, core.ErrDeclined) {
			t.Fatalf("declined restore of serial %d: %v, want core.ErrDeclined", serial, err)
		}
		if shown.Info.Serial != serial || shown.Info.Uncommitted != uncommitted || shown.Serial != 2 {
			t.Errorf("preview of serial %d: %+v, want uncommitted %v, to be written as serial 2", serial, shown.Info, uncommitted)
		}
	}
	if after, err := os.ReadFile(fx.statePath()); err != nil || string(after) != string(before) {
		t.Fatalf("a declined restore changed state.json (%v)", err)
	}
	// Restoring it is how that apply's work is recovered.
	res, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 2})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _ := fx.store.Load(context.Background(), "shop", "dev")
	if res.Head.Serial != 2 || st.Outputs["serial"] != "crashed" {
		t.Errorf("restore of the uncommitted serial 2: serial %d, outputs %v", res.Head.Serial, st.Outputs)
	}
}

// restore --timestamp takes the state as it was then: the newest snapshot at
// or before the time that became state.json, never one marked uncommitted.
func TestRestoreByTimeSkipsWhatNeverBecameState(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()                            // serial 1 at at(1)
	fx.crash(2, at(1).Add(30*time.Second)) // an attempt at serial 2 that crashed
	fx.deploy()                            // serial 2 at at(2)
	fx.crash(3, at(2).Add(30*time.Second)) // serial 3, never state.json
	for _, c := range []struct {
		name string
		at   time.Time
		from int64
	}{
		{"after the crashed serial 3", at(2).Add(time.Minute), 2},
		{"between the crashed attempt and serial 2", at(1).Add(45 * time.Second), 1},
		{"at serial 1", at(1), 1},
	} {
		res, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, At: c.at})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.RestoredFrom != c.from {
			t.Errorf("%s: restored serial %d, want %d", c.name, res.RestoredFrom, c.from)
		}
	}
	_, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, At: at(1).Add(-time.Second)})
	if err == nil || err.Error() != "no snapshot of shop/dev was written at or before 2024-01-15T14:19:59Z: see deployer history" {
		t.Errorf("restore before the first snapshot: %v", err)
	}
}

// Without a state.json, no snapshot ever became it: --timestamp finds none,
// --serial restores one.
func TestRestoreWithoutStateJSON(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	if err := os.Remove(fx.statePath()); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, At: at(5)}); err == nil {
		t.Fatal("restore --timestamp without a state.json found a snapshot that never became it")
	}
	res, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 1})
	if err != nil || res.Head.Serial != 1 {
		t.Fatalf("restore --serial 1 without a state.json: %+v, %v", res, err)
	}
}

// A state.json too damaged to read its serial is replaced by a serial above
// every snapshot, so the history keeps going up.
func TestRestoreOverATruncatedState(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	fx.deploy()
	fx.deploy()
	data, err := os.ReadFile(fx.statePath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.statePath(), data[:10], 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := fx.svc.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 2})
	if err != nil {
		t.Fatal(err)
	}
	fx.restored(res, 4, 2)
	h, err := fx.svc.History(context.Background(), HistoryRequest{Target: shopDev})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range h.Entries {
		if e.Uncommitted {
			t.Errorf("after the restore, serial %d is marked uncommitted", e.Serial)
		}
	}
}

package stateops

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// entry is the history entry of a committed deploy of the fixture.
func entry(serial int64, n int) HistoryEntry {
	sn := statestore.SnapshotName(at(n), serial)
	return HistoryEntry{Serial: serial, Time: at(n), Snapshot: sn, DeploymentID: "dep-" + strconv.FormatInt(serial, 10), Type: "deploy",
		TriggeredBy: "ann@laptop", Status: "success", Changed: &statestore.ResourcesChanged{Updated: 1}}
}

func uncommittedEntry(sn statestore.SnapshotInfo) HistoryEntry {
	return HistoryEntry{Serial: sn.Serial, Time: sn.Time, Snapshot: sn.Name, Status: StatusUncommitted, Uncommitted: true}
}

// A write that crashed before state.json leaves snapshots that never became
// the state: History lists them, marked, with no deployment, and joins the
// others with the deployment that wrote them.
func TestHistoryMarksWhatNeverBecameState(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	fx.deploy()
	above := fx.crash(3, at(2).Add(time.Second))    // serial 3: state.json never written
	earlier := fx.crash(2, at(2).Add(-time.Second)) // an earlier attempt at serial 2
	res, err := fx.svc.History(context.Background(), HistoryRequest{Target: shopDev})
	if err != nil {
		t.Fatal(err)
	}
	want := []HistoryEntry{uncommittedEntry(above), entry(2, 2), uncommittedEntry(earlier), entry(1, 1)}
	if diff := cmp.Diff(want, res.Entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if res.StateErr != nil {
		t.Errorf("StateErr = %v", res.StateErr)
	}
	res, err = fx.svc.History(context.Background(), HistoryRequest{Target: shopDev, Limit: 2})
	if err != nil || !cmp.Equal(want[:2], res.Entries) {
		t.Errorf("limit 2: %+v, %v; want the first two", res, err)
	}
}

// Entries older than the deployment_history state.json keeps are joined
// with the record in their own snapshot.
func TestHistoryReadsOldDeploymentsFromTheirSnapshots(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	st := fx.deploy()
	st.Serial = 3
	st.DeploymentHistory = []statestore.Deployment{{DeploymentID: "dep-3", Type: "deploy", Status: "success", Serial: 3,
		TriggeredBy: "ann@laptop", ResourcesChanged: statestore.ResourcesChanged{Updated: 1}}} // 1 and 2 dropped
	if _, err := fx.store.Save(context.Background(), st, fx.head, nil); err != nil {
		t.Fatal(err)
	}
	res, err := fx.svc.History(context.Background(), HistoryRequest{Target: shopDev})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]HistoryEntry{entry(3, 3), entry(2, 2), entry(1, 1)}, res.Entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestHistoryWithoutState(t *testing.T) {
	fx := newTimeline(t)
	_, err := fx.svc.History(context.Background(), HistoryRequest{Target: shopDev})
	if err == nil || err.Error() != "no state for shop/dev: nothing deployed yet" {
		t.Fatalf("History of nothing: %v", err)
	}
	// The first write crashed between its snapshot and state.json.
	fx.deploy()
	if err := os.Remove(fx.statePath()); err != nil {
		t.Fatal(err)
	}
	res, err := fx.svc.History(context.Background(), HistoryRequest{Target: shopDev})
	sn := statestore.SnapshotInfo{Serial: 1, Time: at(1), Name: statestore.SnapshotName(at(1), 1)}
	if err != nil || !cmp.Equal([]HistoryEntry{uncommittedEntry(sn)}, res.Entries) {
		t.Fatalf("History with a snapshot and no state.json: %+v, %v; want it uncommitted", res, err)
	}
}

// A state.json that fails verification still lets History list the
// snapshots, marked against the serial it records, and reports the error.
func TestHistoryBesideATamperedState(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	fx.deploy()
	above := fx.crash(3, at(3))
	data, err := os.ReadFile(fx.statePath())
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(data, []byte(`"ready"`), []byte(`"READY"`), 1)
	if err := os.WriteFile(fx.statePath(), tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := fx.svc.History(context.Background(), HistoryRequest{Target: shopDev})
	if err != nil {
		t.Fatal(err)
	}
	var bad *statestore.ChecksumError
	if !errors.As(res.StateErr, &bad) {
		t.Fatalf("StateErr = %v, want a *statestore.ChecksumError", res.StateErr)
	}
	// No deployment_history to join with: each comes from its snapshot.
	if diff := cmp.Diff([]HistoryEntry{uncommittedEntry(above), entry(2, 2), entry(1, 1)}, res.Entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

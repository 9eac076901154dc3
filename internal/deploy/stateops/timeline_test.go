package stateops

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// epoch is the time of the first write of a timeline fixture; each write is
// a minute after the one before.
var epoch = time.Date(2024, 1, 15, 14, 20, 0, 0, time.UTC)

// timelineFixture is the Ops over a file state and lock backend in a
// temporary directory, with a clock that advances a minute per reading.
type timelineFixture struct {
	t     *testing.T
	dir   string // the backends' DIR
	svc   *Ops
	store *statestore.Store
	now   time.Time
	head  statestore.Head
}

func newTimeline(t *testing.T) *timelineFixture {
	t.Helper()
	fx := &timelineFixture{t: t, dir: t.TempDir(), now: epoch.Add(-time.Minute)}
	sb, err := filestate.New(fx.dir)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := filelock.New(fx.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lb.Close() })
	clock := func() time.Time { fx.now = fx.now.Add(time.Minute); return fx.now }
	fx.store = statestore.New(sb, statestore.WithClock(clock))
	fx.svc = New(core.New(core.Deps{Store: fx.store, Locks: lockmgr.NewManager(lb, lockmgr.Options{}), Now: clock,
		Getenv: func(string) string { return "" }}))
	return fx
}

// deploy saves the next serial of shop/dev with one deployment record whose
// id names the serial ("dep-1", ...) and the output "serial".
func (fx *timelineFixture) deploy() *statestore.State {
	fx.t.Helper()
	st, _, err := fx.store.Load(context.Background(), "shop", "dev")
	if err != nil {
		st = statestore.NewState("shop", "dev")
	}
	st.Serial++
	st.Outputs["serial"] = st.Serial
	st.Resources["app/api"] = &statestore.Resource{Kind: "Command", Status: "ready", DesiredConfig: map[string]any{"serial": st.Serial}}
	st.DeploymentHistory = append([]statestore.Deployment{{DeploymentID: "dep-" + strconv.FormatInt(st.Serial, 10), Type: "deploy", Status: "success",
		Serial: st.Serial, TriggeredBy: "ann@laptop", ResourcesChanged: statestore.ResourcesChanged{Updated: 1}}}, st.DeploymentHistory...)
	if fx.head, err = fx.store.Save(context.Background(), st, fx.head, nil); err != nil {
		fx.t.Fatal(err)
	}
	return st
}

// crash plants what a write of serial that died between its snapshot and
// state.json leaves: a snapshot of serial, written at at.
func (fx *timelineFixture) crash(serial int64, at time.Time) statestore.SnapshotInfo {
	fx.t.Helper()
	st, _, err := fx.store.Load(context.Background(), "shop", "dev")
	if err != nil {
		fx.t.Fatal(err)
	}
	st.Serial = serial
	st.Outputs["serial"] = "crashed"
	st.DeploymentHistory = append([]statestore.Deployment{{DeploymentID: "dep-crashed", Status: "success", Serial: serial}}, st.DeploymentHistory...)
	doc, err := statestore.Encode(st)
	if err != nil {
		fx.t.Fatal(err)
	}
	name := statestore.SnapshotName(at, serial)
	if err := os.WriteFile(filepath.Join(fx.dir, "stacks", "shop", "dev", "history", name), doc, 0o600); err != nil {
		fx.t.Fatal(err)
	}
	return statestore.SnapshotInfo{Serial: serial, Time: at, Name: name}
}

func (fx *timelineFixture) statePath() string {
	return filepath.Join(fx.dir, "stacks", "shop", "dev", "state.json")
}

// at is the time of the n-th write of the fixture (1-based).
func at(n int) time.Time { return epoch.Add(time.Duration(n-1) * time.Minute) }

var shopDev = core.Target{Stack: "shop", Env: "dev"}

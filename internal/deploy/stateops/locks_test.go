package stateops_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
	"github.com/deployer-dev/deployer/internal/lockmgr/none"
	"github.com/deployer-dev/deployer/internal/statestore"
	filestate "github.com/deployer-dev/deployer/internal/statestore/file"
)

// now is the clock of these tests.
var now = time.Unix(1700000000, 0)

func clock() time.Time { return now }

// lockDir returns a file lock backend in a temp dir (the project's .deployer).
func lockDir(t *testing.T) (string, lockmgr.Backend) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".deployer")
	b, err := filelock.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return dir, b
}

// hold writes a record of key with the given heartbeat age at now, as a
// holder elsewhere would.
func hold(t *testing.T, b lockmgr.Backend, key, id string, hbAge time.Duration, md lockmgr.Metadata) lockmgr.Record {
	t.Helper()
	rec, err := b.TryAcquire(context.Background(), lockmgr.Record{LockKey: key, LockID: id, LockedBy: "ci@runner",
		LockedAt: now.Add(-hbAge - time.Minute).Unix(), LastHeartbeat: now.Add(-hbAge).Unix(), ExpiresAt: now.Add(time.Hour).Unix(), Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

type staleCounter []string

func (s *staleCounter) StaleDetected(key string) { *s = append(*s, key) }

func TestLocksListsTheScopeWithTheConfiguredStaleAfter(t *testing.T) {
	ctx := context.Background()
	_, b := lockDir(t)
	hold(t, b, lockmgr.StackKey("shop", "dev"), "A", 90*time.Second, lockmgr.Metadata{})
	hold(t, b, lockmgr.ServiceKey("shop", "dev2", "app"), "B", 0, lockmgr.Metadata{})
	hold(t, b, lockmgr.StackKey("shopping", "dev"), "C", 0, lockmgr.Metadata{})
	hold(t, b, lockmgr.CustomKey("nightly"), "D", 10*time.Minute, lockmgr.Metadata{})
	expired, err := b.TryAcquire(ctx, lockmgr.Record{LockKey: lockmgr.ComponentKey("shop", "dev", "app", "api"), LockID: "E",
		LockedAt: now.Add(-2 * time.Hour).Unix(), LastHeartbeat: now.Add(-2 * time.Hour).Unix(), ExpiresAt: now.Add(-time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(res *stateops.LocksResult) (out []string) {
		for _, s := range res.Locks {
			out = append(out, s.LockID+"="+string(s.Verdict))
		}
		return out
	}
	for _, c := range []struct {
		staleAfter time.Duration
		req        stateops.LocksRequest
		want       []string
		stale      []string
	}{
		{time.Minute, stateops.LocksRequest{}, []string{"D=STALE", "A=STALE", "B=ACTIVE", "E=EXPIRED", "C=ACTIVE"},
			[]string{lockmgr.CustomKey("nightly"), lockmgr.StackKey("shop", "dev")}},
		{0, stateops.LocksRequest{Stack: "shop"}, []string{"A=ACTIVE", "B=ACTIVE", "E=EXPIRED"}, nil},
		{time.Minute, stateops.LocksRequest{Stack: "shop", Env: "dev"}, []string{"A=STALE", "E=EXPIRED"}, []string{lockmgr.StackKey("shop", "dev")}},
		{5 * time.Minute, stateops.LocksRequest{Stack: "shop", Env: "dev2"}, []string{"B=ACTIVE"}, nil},
		{time.Minute, stateops.LocksRequest{Stack: "other"}, nil, nil},
	} {
		var stale staleCounter
		m := lockmgr.NewManager(b, lockmgr.Options{StaleAfter: c.staleAfter, Now: clock})
		res, err := stateops.NewLocking(stateops.LockDeps{Locks: m, Observer: &stale}).Locks(ctx, c.req)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, ids(res)); d != "" || res.LockingOff {
			t.Errorf("%+v, stale_after %s (-want +got):\n%s", c.req, c.staleAfter, d)
		}
		if d := cmp.Diff(c.stale, []string(stale)); d != "" {
			t.Errorf("%+v: stale locks counted (-want +got):\n%s", c.req, d)
		}
	}
	m := lockmgr.NewManager(b, lockmgr.Options{Now: clock})
	res, err := stateops.NewLocking(stateops.LockDeps{Locks: m}).Locks(ctx, stateops.LocksRequest{Stack: "shop", Env: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	want := lockmgr.Status{Record: expired, Verdict: lockmgr.Expired, Level: lockmgr.LevelComponent, Age: 2 * time.Hour, HeartbeatAge: 2 * time.Hour}
	if d := cmp.Diff(want, res.Locks[1]); d != "" {
		t.Errorf("status of an expired component lock (-want +got):\n%s", d)
	}

	off := lockmgr.NewManager(none.New(), lockmgr.Options{})
	if res, err := stateops.NewLocking(stateops.LockDeps{Locks: off}).Locks(ctx, stateops.LocksRequest{}); err != nil || !res.LockingOff || len(res.Locks) != 0 {
		t.Errorf("with lock: none, Locks = %+v, %v; want locking off", res, err)
	}
}

func TestUnlockPolicy(t *testing.T) {
	ctx := context.Background()
	tg := core.Target{Stack: "shop", Env: "dev"}
	key := tg.LockKey()
	for _, c := range []struct {
		name       string
		staleAfter time.Duration
		hbAge      time.Duration
		req        stateops.UnlockRequest
		wantErr    string
		refused    bool
		broken     bool
	}{
		{name: "stale", hbAge: 10 * time.Minute, req: stateops.UnlockRequest{Target: tg}, broken: true},
		{name: "stale with its lock id", hbAge: 10 * time.Minute, req: stateops.UnlockRequest{Target: tg, LockID: "L-1"}, broken: true},
		{name: "active", hbAge: 4 * time.Second, req: stateops.UnlockRequest{Target: tg}, refused: true,
			wantErr: "lock stack:shop:env:dev is ACTIVE (heartbeat 4s ago, by ci@runner): breaking it needs --lock-id L-1"},
		{name: "active with its lock id", hbAge: 4 * time.Second, req: stateops.UnlockRequest{Target: tg, LockID: "L-1"}, broken: true},
		{name: "another lock id", hbAge: 10 * time.Minute, req: stateops.UnlockRequest{Target: tg, LockID: "L-2"}, refused: true,
			wantErr: "lock stack:shop:env:dev is held with lock id L-1, not L-2: nothing was broken (L-2 is mistyped, or names a holder that no longer holds it); check the id with deployer state locks"},
		{name: "stale under the configured stale_after", staleAfter: time.Minute, hbAge: 90 * time.Second, req: stateops.UnlockRequest{Target: tg}, broken: true},
		{name: "active under the default stale_after", hbAge: 90 * time.Second, req: stateops.UnlockRequest{Target: tg}, refused: true,
			wantErr: "lock stack:shop:env:dev is ACTIVE (heartbeat 1m30s ago, by ci@runner): breaking it needs --lock-id L-1"},
		{name: "another level", hbAge: 10 * time.Minute, req: stateops.UnlockRequest{Target: core.Target{Stack: "shop", Env: "dev", Service: "app"}},
			wantErr: "no lock is held on stack:shop:env:dev:service:app: nothing to unlock (see deployer state locks)"},
		{name: "declined", hbAge: 10 * time.Minute, req: stateops.UnlockRequest{Target: tg, Confirm: func(lockmgr.Status) error { return errors.New("no") }},
			wantErr: "no"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, b := lockDir(t)
			rec := hold(t, b, key, "L-1", c.hbAge, lockmgr.Metadata{Operation: "deploy"})
			var audit bytes.Buffer
			m := lockmgr.NewManager(b, lockmgr.Options{StaleAfter: c.staleAfter, Now: clock, Audit: slog.New(slog.NewJSONHandler(&audit, nil))})
			var confirmed, broken []string
			req := c.req
			if req.Confirm == nil {
				req.Confirm = func(s lockmgr.Status) error {
					confirmed = append(confirmed, s.LockID+"="+string(s.Verdict))
					return nil
				}
			}
			req.Broken = func(s lockmgr.Status) { broken = append(broken, s.LockID) }
			res, err := stateops.NewLocking(stateops.LockDeps{Locks: m, Getenv: func(string) string { return "" },
				Ops: func(context.Context) (*stateops.Ops, error) { t.Fatal("no deployment to record"); return nil, nil }}).Unlock(ctx, req)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				var refused *stateops.UnlockRefusedError
				if errors.As(err, &refused) != c.refused {
					t.Errorf("error %v: refused = %v, want %v", err, !c.refused, c.refused)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			_, gerr := b.Get(ctx, key)
			if gone := errors.Is(gerr, lockmgr.ErrNotFound); gone != c.broken {
				t.Fatalf("lock broken = %v, want %v (%v)", gone, c.broken, gerr)
			}
			if !c.broken {
				if len(broken) != 0 || strings.Contains(audit.String(), "lock.force_unlocked") {
					t.Errorf("nothing broken, yet Broken was called (%v) or the audit log says so:\n%s", broken, audit.String())
				}
				return
			}
			if res.Lock.Record != rec || res.RecordErr != nil || len(confirmed) != 1 || !cmp.Equal(broken, []string{"L-1"}) {
				t.Errorf("result %+v, confirmed %v, broken %v", res, confirmed, broken)
			}
			if !strings.Contains(audit.String(), `"msg":"lock.force_unlocked"`) {
				t.Errorf("no lock.force_unlocked in the audit log:\n%s", audit.String())
			}
		})
	}
	// Not held at all: the error wraps ErrNotFound.
	_, b := lockDir(t)
	_, err := stateops.NewLocking(stateops.LockDeps{Locks: lockmgr.NewManager(b, lockmgr.Options{Now: clock})}).Unlock(ctx, stateops.UnlockRequest{Target: tg})
	if !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("unlock of a free lock = %v, want ErrNotFound", err)
	}
}

// A lock taken over between the look and the break is not broken.
func TestUnlockLeavesALockThatChangedHands(t *testing.T) {
	ctx := context.Background()
	_, b := lockDir(t)
	tg := core.Target{Stack: "shop", Env: "dev"}
	hold(t, b, tg.LockKey(), "L-1", 10*time.Minute, lockmgr.Metadata{})
	m := lockmgr.NewManager(b, lockmgr.Options{Now: clock})
	_, err := stateops.NewLocking(stateops.LockDeps{Locks: m}).Unlock(ctx, stateops.UnlockRequest{Target: tg, Confirm: func(s lockmgr.Status) error {
		if err := b.Release(ctx, s.LockKey, s.LockID); err != nil {
			return err
		}
		hold(t, b, s.LockKey, "L-2", 0, lockmgr.Metadata{})
		return nil
	}})
	want := "lock stack:shop:env:dev changed hands while unlocking (lock id L-1 is gone): nothing was broken; check deployer state locks"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if rec, err := b.Get(ctx, tg.LockKey()); err != nil || rec.LockID != "L-2" {
		t.Errorf("the new holder's lock: %+v, %v", rec, err)
	}
}

// Breaking a deploy's lock records its deployment as abandoned in the
// history; lock exec's locks record nothing.
func TestUnlockRecordsTheBrokenDeployment(t *testing.T) {
	ctx := context.Background()
	dir, b := lockDir(t)
	sb, err := filestate.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	store := statestore.New(sb)
	m := lockmgr.NewManager(b, lockmgr.Options{Now: clock})
	var progress bytes.Buffer
	opened := 0
	deps := stateops.LockDeps{Locks: m, Getenv: func(string) string { return "" }, Ops: func(context.Context) (*stateops.Ops, error) {
		opened++
		return stateops.New(core.New(core.Deps{Locks: m, Store: store, Now: clock, Progress: &progress})), nil
	}}
	tg := core.Target{Stack: "shop", Env: "dev"}
	hold(t, b, tg.LockKey(), "L-1", 10*time.Minute, lockmgr.Metadata{Operation: "deploy", DeploymentID: "dep-0123456789ab", PID: 4242, Hostname: "runner"})
	res, err := stateops.NewLocking(deps).Unlock(ctx, stateops.UnlockRequest{Target: tg})
	if err != nil || res.RecordErr != nil {
		t.Fatalf("unlock: %v, record: %v", err, res.RecordErr)
	}
	st, _, err := store.Load(ctx, "shop", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.DeploymentHistory) != 1 || st.DeploymentHistory[0].DeploymentID != "dep-0123456789ab" || st.DeploymentHistory[0].Status != statestore.DeploymentAbandoned {
		t.Fatalf("history after breaking a deploy's lock: %+v", st.DeploymentHistory)
	}
	// It started when its lock was taken and ran at least until its last
	// heartbeat (a minute, as hold took it), not 0 s at the unlock.
	if d := st.DeploymentHistory[0]; !d.Timestamp.Equal(now.Add(-11*time.Minute).Truncate(time.Second)) || d.DurationSeconds != 60 {
		t.Errorf("abandoned deployment: started %s, duration %.0fs; want %s and 60s", d.Timestamp, d.DurationSeconds, now.Add(-11*time.Minute))
	}
	if !strings.Contains(progress.String(), "Deployment dep-0123456789ab by ci@runner") {
		t.Errorf("progress does not report the abandoned deployment:\n%s", progress.String())
	}
	if _, err := b.Get(ctx, tg.LockKey()); !errors.Is(err, lockmgr.ErrNotFound) {
		t.Errorf("the recording's own lock is left behind: %v", err)
	}

	hold(t, b, lockmgr.CustomKey("nightly"), "L-2", 10*time.Minute, lockmgr.Metadata{Operation: "exec", DeploymentID: "dep-ffffffffffff"})
	if _, err := stateops.NewLocking(deps).Unlock(ctx, stateops.UnlockRequest{Key: "nightly"}); err != nil {
		t.Fatal(err)
	}
	if opened != 1 {
		t.Errorf("the Ops were opened %d times, want once (lock exec's locks record nothing)", opened)
	}

	hold(t, b, tg.LockKey(), "L-3", 10*time.Minute, lockmgr.Metadata{Operation: "deploy", DeploymentID: "dep-aaaaaaaaaaaa"})
	deps.Ops = func(context.Context) (*stateops.Ops, error) { return nil, errors.New("open state: denied") }
	res, err = stateops.NewLocking(deps).Unlock(ctx, stateops.UnlockRequest{Target: tg})
	if err != nil || res.RecordErr == nil || res.RecordErr.Error() != "open state: denied" {
		t.Errorf("a failed recording is the result's RecordErr, not the unlock's error: %v, %+v", err, res)
	}
}

// unlockLog is a stateops.Reporter that keeps the locks broken.
type unlockLog struct{ broken []string }

func (l *unlockLog) Restored(core.Target, *stateops.RestoreResult) {}
func (l *unlockLog) LockBroken(s lockmgr.Status)                   { l.broken = append(l.broken, s.LockID) }

// Unlock reports the lock it broke to the Reporter it is given
// (docs/design.md#reporting); a refused unlock reports nothing.
func TestUnlockReportsTheBrokenLock(t *testing.T) {
	ctx := context.Background()
	_, b := lockDir(t)
	log := &unlockLog{}
	l := stateops.NewLocking(stateops.LockDeps{Locks: lockmgr.NewManager(b, lockmgr.Options{Now: clock}), Getenv: func(string) string { return "" }, Reporter: log})
	tg := core.Target{Stack: "shop", Env: "dev"}
	hold(t, b, tg.LockKey(), "L-1", 0, lockmgr.Metadata{Operation: "deploy"})
	var refused *stateops.UnlockRefusedError
	if _, err := l.Unlock(ctx, stateops.UnlockRequest{Target: tg}); !errors.As(err, &refused) || len(log.broken) != 0 {
		t.Fatalf("unlock of an ACTIVE lock without its id: %v, reported %v; want refused, nothing reported", err, log.broken)
	}
	if _, err := l.Unlock(ctx, stateops.UnlockRequest{Target: tg, LockID: "L-1"}); err != nil || !cmp.Equal(log.broken, []string{"L-1"}) {
		t.Fatalf("unlock --lock-id L-1: %v, reported %v; want L-1 reported", err, log.broken)
	}
}

package stateops

import (
	"context"
	"errors"
	"testing"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

// reportLog is a Reporter that keeps what it hears.
type reportLog struct {
	restored []*RestoreResult
	targets  []core.Target
	broken   []lockmgr.Status
}

func (l *reportLog) Restored(t core.Target, res *RestoreResult) {
	l.targets, l.restored = append(l.targets, t), append(l.restored, res)
}
func (l *reportLog) LockBroken(s lockmgr.Status) { l.broken = append(l.broken, s) }

// A restore reports what it wrote, once its lock is released, to the
// Reporter it is given (docs/design.md#reporting); a declined one
// reports nothing.
func TestRestoreReportsWhatItWrote(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	fx.deploy()
	log := &reportLog{}
	ops := fx.svc.WithReporter(log)
	if _, err := ops.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 1,
		Confirm: func(RestorePreview) (bool, error) { return false, nil }}); !errors.Is(err, core.ErrDeclined) {
		t.Fatalf("declined restore: %v", err)
	}
	if len(log.restored) != 0 {
		t.Fatalf("a declined restore was reported: %+v", log.restored)
	}
	res, err := ops.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.restored) != 1 || log.restored[0] != res || log.targets[0] != (core.Target{Stack: "shop", Env: "dev"}) {
		t.Fatalf("reported %+v for %v, want the result of the restore of shop/dev", log.restored, log.targets)
	}
	if held := ops.c.Locks.Held(); held != 0 {
		t.Errorf("%d lock(s) held when the restore was reported, want it released", held)
	}
}

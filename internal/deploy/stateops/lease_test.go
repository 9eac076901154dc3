package stateops

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
)

// A lease broken while a restore holds it cannot be released: the restore
// fails saying so instead of dropping the error
// (docs/design.md#lock-protocol).
func TestRestoreReportsALeaseItCouldNotRelease(t *testing.T) {
	fx := newTimeline(t)
	fx.deploy()
	fx.deploy()
	lb, err := filelock.New(fx.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lb.Close() })
	m := lockmgr.NewManager(lb, lockmgr.Options{})
	var progress bytes.Buffer
	svc := New(core.New(core.Deps{Store: fx.store, Locks: m, Now: fx.svc.c.Now, Getenv: func(string) string { return "" }, Progress: &progress}))
	_, err = svc.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 1,
		Confirm: func(RestorePreview) (bool, error) {
			held, err := m.Get(context.Background(), shopDev.LockKey())
			if err != nil {
				return false, err
			}
			if held.Metadata.Operation != lockmgr.OpRestore {
				t.Errorf("the restore holds its lock as operation %q, want restore", held.Metadata.Operation)
			}
			return true, m.ForceUnlock(context.Background(), held.LockKey, held.LockID, "admin")
		}})
	want := "lock stack:shop:env:dev was not released: "
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, lockmgr.ErrLockLost) {
		t.Errorf("restore after a broken lease returned %v, want an error saying %q and wrapping lockmgr.ErrLockLost", err, want)
	}
	if strings.Contains(progress.String(), "Released lock") {
		t.Errorf("progress after a broken lease says it was released:\n%s", progress.String())
	}
}

package deploy

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	filelock "github.com/deployer-dev/deployer/internal/lockmgr/file"
)

// A lease broken while a restore holds it cannot be released: the restore
// says so on the progress stream instead of dropping the error
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
	svc := New(Deps{Store: fx.store, Locks: m, Now: fx.svc.d.Now, Getenv: func(string) string { return "" }, Progress: &progress})
	_, _ = svc.Restore(context.Background(), RestoreRequest{Target: shopDev, Serial: 1,
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
	want := "warning: lock stack:shop:env:dev was not released: "
	if !strings.Contains(progress.String(), want) {
		t.Errorf("progress after a broken lease:\n%s\nwant a line starting %q", progress.String(), want)
	}
}

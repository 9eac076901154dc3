package file

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/deployer-dev/deployer/internal/lockmgr"
)

var _ lockmgr.Notifier = (*Backend)(nil)

// Watch implements lockmgr.Notifier with fsnotify (inotify on Linux, kqueue
// on macOS/BSD, ReadDirectoryChangesW on Windows) on the lock directory: a
// record file removed or renamed away announces its key. Where the file
// system gives no events (some network file systems) the waiters poll.
// Records are replaced by rename, so only a removal is a release.
func (b *Backend) Watch(ctx context.Context) (<-chan string, error) {
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return nil, fmt.Errorf("watch lock directory: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch lock directory %s: %w", b.dir, err)
	}
	if err := w.Add(b.dir); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("watch lock directory %s: %w", b.dir, err)
	}
	out := make(chan string, 64)
	go func() {
		defer close(out)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case <-b.close:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				stem, isRecord := strings.CutSuffix(filepath.Base(ev.Name), recordExt)
				if !isRecord || !ev.Has(fsnotify.Remove) {
					continue
				}
				key, ok := decodeKey(stem)
				if !ok {
					key = "" // a hashed name: wake every waiter
				}
				select {
				case out <- key:
				default:
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return out, nil
}

var _ lockmgr.Remover = (*Backend)(nil)

// Remove implements lockmgr.Remover: deletes the record and fence files of
// key (wait-queue records only; a lock key's fence file must stay).
func (b *Backend) Remove(ctx context.Context, key string) error {
	err := b.withLock(ctx, func() error {
		name := encodeKey(key)
		for _, ext := range []string{recordExt, fenceExt} {
			if err := os.Remove(filepath.Join(b.dir, name+ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove %s: %w", key, err)
	}
	return nil
}

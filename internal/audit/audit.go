// Package audit writes deployer's audit log: JSON lines through log/slog with
// the field names of docs/locking.md#audit-log ("timestamp", "level", "event", ...). Events:
// lock.acquired, lock.released (duration_seconds), lock.heartbeat_failed,
// lock.force_unlocked, lock.kept, state.saved, state.restored, deploy.started,
// deploy.finished, guard.decision (docs/guard.md).
package audit

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// New returns a logger writing one JSON object per event to w. A nil w
// discards events.
func New(w io.Writer) *slog.Logger {
	if w == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String("timestamp", a.Value.Time().UTC().Format(time.RFC3339Nano))
			case slog.MessageKey:
				a.Key = "event"
			}
			return a
		},
	}))
}

// Open appends to the audit log at path (created 0600 with its directory).
// The returned closer flushes and closes it.
func Open(path string) (*slog.Logger, io.Closer, error) {
	return OpenMasked(path, nil)
}

// OpenMasked is Open with every event line passed through wrap (a secrets
// Masker's Writer: known secret values are written as ***); nil wrap: none.
func OpenMasked(path string, wrap func(io.Writer) io.Writer) (*slog.Logger, io.Closer, error) {
	if path == "" {
		return New(nil), io.NopCloser(nil), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("open audit log %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open audit log %s: %w", path, err)
	}
	var w io.Writer = f
	if wrap != nil {
		w = wrap(f)
	}
	return New(w), f, nil
}

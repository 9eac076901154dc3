package lockmgr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/lockmgr/none"
)

// lock.released's duration_seconds is measured from the acquisition itself,
// not from the record's whole-second lockedAt.
func TestReleasedDurationIsPrecise(t *testing.T) {
	var audit bytes.Buffer
	clock := time.Unix(1700000000, 900_000_000) // .9 s past a whole second
	m := lockmgr.NewManager(none.New(), lockmgr.Options{
		Now: func() time.Time { return clock }, Audit: slog.New(slog.NewJSONHandler(&audit, nil)),
	})
	l, err := m.Acquire(context.Background(), lockmgr.Request{Key: lockmgr.StackKey("shop", "dev")})
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(250 * time.Millisecond)
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var ev struct {
			Msg string  `json:"msg"`
			Dur float64 `json:"duration_seconds"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Msg == "lock.released" {
			if ev.Dur != 0.25 {
				t.Errorf("lock.released duration_seconds = %v, want 0.25", ev.Dur)
			}
			return
		}
	}
	t.Fatalf("no lock.released event in:\n%s", audit.String())
}
